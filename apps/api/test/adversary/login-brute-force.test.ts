// Attacks on the doors (SPEC §4 buckets): credential spraying, distributed guessing of one account, sign-up automation
// over REST, GraphQL aliases and batches, and X-Forwarded-For forgery. Each proves nothing was issued or created.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestApp } from '../support/app.js';
import { accessTokenOf, bearer, createUser, login, PASSWORD, type TestUser } from '../support/auth.js';

type Response = Awaited<ReturnType<typeof login>>;

const WRONG = 'not the password!';
const tokensIssued = (app: FastifyInstance) => app.db.prisma.refreshToken.count();

function expectRefused(response: Response) {
  expect(response.statusCode).toBe(429);
  expect(response.json()).toMatchObject({ code: 42900 });
  expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
}

/** Statuses of `attempts`, sent one after another (the buckets are counted in order). */
async function statuses(attempts: (() => Promise<Response>)[]): Promise<number[]> {
  const result: number[] = [];
  for (const attempt of attempts) result.push((await attempt()).statusCode);
  return result;
}

const repeat = (n: number, status: number) => Array.from({ length: n }, () => status);

describe('credential spraying: many e-mails from one client address', () => {
  let app: FastifyInstance;
  let ada: TestUser;
  beforeAll(async () => {
    app = await createTestApp(); // loginMax 10, loginIpMax 20 (SPEC defaults)
    ada = await createUser(app, { email: 'ada@example.com' });
  });
  afterAll(() => app.close());

  it('stops after 20 attempts per minute across e-mails, also for a right password, while other addresses are served', async () => {
    const spray = Array.from({ length: 40 }, (_, n) => () => login(app, { email: `victim${n}@example.com`, password: WRONG }, '192.0.2.10'));
    expect(await statuses(spray)).toEqual([...repeat(20, 401), ...repeat(20, 429)]);

    const right = await login(app, { email: ada.email, password: PASSWORD }, '192.0.2.10');
    expectRefused(right);
    expect(right.headers['x-ratelimit-limit']).toBe('20'); // the exceeded bucket is the one reported
    expect(await tokensIssued(app)).toBe(0);

    expect((await login(app, { email: ada.email, password: PASSWORD }, '192.0.2.11')).statusCode).toBe(200);
  });

  it('ignores a forged X-Forwarded-For when TRUST_PROXY is off (the default): every attempt counts for the peer', async () => {
    const forged = Array.from(
      { length: 25 },
      (_, n) => () =>
        app.inject({
          method: 'POST',
          url: '/login',
          payload: { email: `x${n}@example.com`, password: WRONG },
          remoteAddress: '192.0.2.12',
          headers: { 'x-forwarded-for': `198.51.100.${n + 1}` },
        }),
    );
    expect(await statuses(forged)).toEqual([...repeat(20, 401), ...repeat(5, 429)]);
  });
});

describe('X-Forwarded-For forgery behind one trusted proxy (TRUST_PROXY=1, a hop count)', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await createTestApp({ trustProxy: 1 });
  });
  afterAll(() => app.close());

  it('keys on the address the proxy saw, not on what the client wrote before it: prepending fresh addresses gets nothing', async () => {
    // The proxy appends the peer it saw (203.0.113.7); the client prepends a fresh forged address every time.
    const forged = Array.from(
      { length: 25 },
      (_, n) => () =>
        app.inject({
          method: 'POST',
          url: '/login',
          payload: { email: `h${n}@example.com`, password: WRONG },
          remoteAddress: '10.0.0.2',
          headers: { 'x-forwarded-for': `198.51.100.${n + 1}, 203.0.113.7` },
        }),
    );
    expect(await statuses(forged)).toEqual([...repeat(20, 401), ...repeat(5, 429)]);
    // Another client behind the same proxy has a budget of its own.
    const other = await app.inject({
      method: 'POST',
      url: '/login',
      payload: { email: 'h0@example.com', password: WRONG },
      remoteAddress: '10.0.0.2',
      headers: { 'x-forwarded-for': '203.0.113.8' },
    });
    expect(other.statusCode).toBe(401);
  });
});

describe('distributed guessing: one account from many client addresses', () => {
  let app: FastifyInstance;
  let grace: TestUser;
  beforeAll(async () => {
    // Behind a proxy that appends the client to X-Forwarded-For; the peer of every request is the proxy (127.0.0.1).
    app = await createTestApp({ trustProxy: true });
    grace = await createUser(app, { email: 'grace@example.com' });
  });
  afterAll(() => app.close());

  const from = (address: string, password: string, email = grace.email) =>
    app.inject({ method: 'POST', url: '/login', payload: { email, password }, headers: { 'x-forwarded-for': address } });

  it('refuses the account after 30 failures across addresses, the right password included, and issues nothing', async () => {
    const botnet = Array.from({ length: 40 }, (_, n) => () => from(`203.0.113.${n + 1}`, WRONG));
    expect(await statuses(botnet)).toEqual([...repeat(30, 401), ...repeat(10, 429)]);
    const owner = await from('203.0.113.200', PASSWORD);
    expectRefused(owner);
    expect(await tokensIssued(app)).toBe(0);
    // Another account is not affected.
    await createUser(app, { email: 'other@example.com' });
    expect((await from('203.0.113.201', PASSWORD, 'other@example.com')).statusCode).toBe(200);
  });

  it("keys flooding other buckets (6,000 made-up clients) do not push the account's failures out of memory", async () => {
    // Each bucket keeps its own 5,000 most recent keys: one shared store would have forgotten grace's 30 failures here.
    const issued = await tokensIssued(app);
    for (let n = 0; n < 6_000; n++) await app.consumeRateLimit(app.defaultRateBucket, { key: `flood-${n}` });
    expectRefused(await from('203.0.113.202', PASSWORD));
    expect(await tokensIssued(app)).toBe(issued);
  });

  it('a concurrent burst of guesses from 40 addresses gets no more than 30 checks of the password', async () => {
    await createUser(app, { email: 'burst@example.com' });
    const burst = await Promise.all(Array.from({ length: 40 }, (_, n) => from(`203.0.113.${n + 100}`, WRONG, 'burst@example.com')));
    const counts = burst.reduce<Record<number, number>>(
      (tally, response) => ({ ...tally, [response.statusCode]: (tally[response.statusCode] ?? 0) + 1 }),
      {},
    );
    expect(counts).toEqual({ 401: 30, 429: 10 });
  });

  it('keys every bucket on the forwarded client address: one address is still stopped at 20', async () => {
    const spray = Array.from({ length: 22 }, (_, n) => () => from('203.0.113.250', WRONG, `spray${n}@example.com`));
    expect(await statuses(spray)).toEqual([...repeat(20, 401), ...repeat(2, 429)]);
  });
});

describe('locking the real owner out', () => {
  let app: FastifyInstance;
  let lin: TestUser;
  const WINDOW_MS = 1_500;
  beforeAll(async () => {
    app = await createTestApp({ trustProxy: true, rateLimits: { loginAccount: { max: 5, windowMs: WINDOW_MS } } });
    lin = await createUser(app, { email: 'lin@example.com' });
  });
  afterAll(() => app.close());

  const from = (address: string, password: string) =>
    app.inject({ method: 'POST', url: '/login', payload: { email: lin.email, password }, headers: { 'x-forwarded-for': address } });

  it("the owner's own sign-ins never use up the account bucket", async () => {
    expect(await statuses(Array.from({ length: 8 }, () => () => from('192.0.2.50', PASSWORD)))).toEqual(repeat(8, 200));
    expect(await statuses(Array.from({ length: 4 }, (_, n) => () => from(`198.51.100.${n + 1}`, WRONG)))).toEqual(repeat(4, 401));
    expect((await from('192.0.2.50', PASSWORD)).statusCode).toBe(200);
    await sleep(WINDOW_MS + 100); // a fresh window for the next test
  });

  it('an attacker who keeps trying cannot extend the lock-out beyond one window', async () => {
    // The window opens when the first failure is counted, which is before its answer arrives: timing from that
    // answer (not from before the request, which on a loaded machine can be long before) bounds the window's end.
    expect((await from('198.51.100.10', WRONG)).statusCode).toBe(401);
    const startedAt = Date.now();
    expect(await statuses(Array.from({ length: 4 }, (_, n) => () => from(`198.51.100.${n + 11}`, WRONG)))).toEqual(repeat(4, 401));
    // Locked: the attacker keeps hammering; refused attempts do not count as failures.
    while (Date.now() - startedAt < WINDOW_MS - 200) {
      expectRefused(await from('198.51.100.99', WRONG));
      await sleep(50);
    }
    await sleep(Math.max(0, startedAt + WINDOW_MS + 100 - Date.now()));
    const owner = await from('192.0.2.50', PASSWORD);
    expect(owner.statusCode).toBe(200);
    expect(Date.now() - startedAt).toBeLessThan(WINDOW_MS * 3);
  });
});

describe('login requests count in the default bucket', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await createTestApp({ defaultRateLimit: { max: 5, windowMs: 60_000 }, rateLimits: { loginMax: 100, loginIpMax: 100 } });
  });
  afterAll(() => app.close());

  it('after the default budget is spent on logins, logins and every other request are refused', async () => {
    const logins = Array.from({ length: 6 }, (_, n) => () => login(app, { email: `d${n}@example.com`, password: WRONG }, '192.0.2.60'));
    expect(await statuses(logins)).toEqual([...repeat(5, 401), 429]);
    expect((await app.inject({ method: 'GET', url: '/api/v1/users', remoteAddress: '192.0.2.60' })).statusCode).toBe(429);
  });
});

describe('sign-up automation', () => {
  let app: FastifyInstance;
  const LIMIT = 5;
  beforeAll(async () => {
    app = await createTestApp({ rateLimits: { signup: { max: LIMIT, windowMs: 3_600_000 } } });
  });
  afterAll(() => app.close());

  const created = (prefix: string) => app.db.prisma.user.count({ where: { email: { startsWith: prefix } } });
  const gql = (payload: unknown, remoteAddress: string) =>
    app.inject({
      method: 'POST',
      url: '/graphql',
      payload: payload as Record<string, unknown>,
      remoteAddress,
      headers: { accept: 'application/graphql-response+json' },
    });
  const createUserOp = (email: string, alias = 'u') =>
    `${alias}: createUser(input: {name: "bot", email: "${email}", password: "bot-password-1"}) { id }`;

  it('REST: each POST /api/v1/users counts; over the limit 429 and no user', async () => {
    const posts = Array.from(
      { length: 8 },
      (_, n) => () =>
        app.inject({
          method: 'POST',
          url: '/api/v1/users',
          payload: { name: 'bot', email: `rest${n}@bots.example`, password: 'bot-password-1' },
          remoteAddress: '192.0.2.70',
        }),
    );
    expect(await statuses(posts)).toEqual([...repeat(LIMIT, 201), ...repeat(3, 429)]);
    expect(await created('rest')).toBe(LIMIT);
  });

  it('GraphQL aliases: each aliased createUser counts, in one HTTP request', async () => {
    const aliases = Array.from({ length: 8 }, (_, n) => createUserOp(`alias${n}@bots.example`, `a${n}`)).join(' ');
    const response = await gql({ query: `mutation { ${aliases} }` }, '192.0.2.71');
    const body = response.json() as { data: unknown; errors?: { path?: string[]; extensions?: { code?: string } }[] };
    // Mutation fields run in order; the sixth is refused, and its non-null error ends the operation (data: null).
    expect(body.errors).toEqual([expect.objectContaining({ path: [`a${LIMIT}`], extensions: { code: 'RATE_LIMITED' } })]);
    expect(await created('alias')).toBe(LIMIT);
  });

  it('GraphQL batch: every operation of a batch of 10 counts', async () => {
    const batch = Array.from({ length: 10 }, (_, n) => ({ query: `mutation { ${createUserOp(`batch${n}@bots.example`)} }` }));
    const response = await gql(batch, '192.0.2.72');
    const results = response.json() as { data?: unknown; errors?: { extensions?: { code?: string } }[] }[];
    expect(results).toHaveLength(10);
    expect(results.filter((result) => result.errors?.[0]?.extensions?.code === 'RATE_LIMITED')).toHaveLength(10 - LIMIT);
    expect(await created('batch')).toBe(LIMIT);
  });

  it('REST and GraphQL share one budget per address', async () => {
    const rest = () =>
      app.inject({
        method: 'POST',
        url: '/api/v1/users',
        payload: { name: 'bot', email: `mix${Math.random()}@bots.example` },
        remoteAddress: '192.0.2.73',
      });
    expect(await statuses(Array.from({ length: LIMIT }, () => rest))).toEqual(repeat(LIMIT, 201));
    const body = (await gql({ query: `mutation { ${createUserOp('mixgql@bots.example')} }` }, '192.0.2.73')).json() as {
      errors?: { extensions?: { code?: string } }[];
    };
    expect(body.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    expect(await created('mix')).toBe(LIMIT);
  });

  it('ADMIN batch creation (POST /users/batch) is not a sign-up and is not counted', async () => {
    const admin = await createUser(app, { email: 'root@example.com', role: 'ADMIN' });
    const token = await accessTokenOf(app, admin);
    const users = Array.from({ length: 8 }, (_, n) => ({ name: 'staff', email: `staff${n}@example.com` }));
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/users/batch',
      payload: { users },
      headers: bearer(token),
      remoteAddress: '192.0.2.70',
    });
    expect(response.statusCode).toBe(201);
    expect(await created('staff')).toBe(8);
  });
});
