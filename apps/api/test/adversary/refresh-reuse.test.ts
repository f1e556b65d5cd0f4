// Attacks on refresh rotation and token lifetime: a stolen refresh token replayed, a race of presentations, and an
// access token minted without `exp` (as a leaked secret or a forgotten option would mint one).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { createHmac, randomUUID } from 'node:crypto';
import { ManualClock } from '../../src/auth/clock.js';
import { createAuthTestApp, createUser, expectUnauthenticated, login, bearer, type TestUser } from '../support/auth.js';
import { listen, Subscription, wsClient } from '../support/ws.js';

const MINUTE = 60_000;
const LIMITS = { loginMax: 1000, refreshMax: 1000, loginIpMax: 1000, loginAccount: { max: 1000, windowMs: 60_000 } };

interface Pair {
  accessToken: string;
  refreshToken: string;
}

let app: FastifyInstance;
let clock: ManualClock;
let seq = 0;

beforeAll(async () => {
  clock = new ManualClock(Date.now());
  app = await createAuthTestApp({ clock, config: { rateLimits: LIMITS } });
});
afterAll(() => app.close());
beforeEach(() => clock.advance(MINUTE));

const newUser = () => createUser(app, { email: `victim${++seq}@example.com` });
async function pairOf(user: TestUser): Promise<Pair> {
  const response = await login(app, { email: user.email, password: user.password });
  expect(response.statusCode).toBe(200);
  return response.json() as Pair;
}
async function sessionOf(user: TestUser): Promise<string> {
  const response = await login(app, { email: user.email, password: user.password, session: true });
  expect(response.statusCode).toBe(200);
  const sid = response.cookies.find((c) => c.name === 'sid');
  expect(sid).toBeDefined();
  return sid!.value;
}
const refresh = (refreshToken: string) => app.inject({ method: 'POST', url: '/auth/refresh', payload: { refreshToken } });
const keysWith = (headers: Record<string, string>) => app.inject({ method: 'GET', url: '/api/v1/api-keys', headers });
const keysWithSession = (sid: string) => app.inject({ method: 'GET', url: '/api/v1/api-keys', cookies: { sid } });
const tokenVersion = async (id: number) => (await app.db.prisma.user.findUniqueOrThrow({ where: { id } })).tokenVersion;
const liveFamilies = async (userId: number) => app.db.prisma.refreshToken.count({ where: { userId, revokedAt: null, usedAt: null } });

describe('stolen refresh token replayed after the owner rotated it', () => {
  it('is reuse at any time: 401, every family revoked, tokenVersion bumped, every cookie session ended', async () => {
    const victim = await newUser();
    const bystander = await newUser();
    const stolen = await pairOf(victim);
    const otherDevice = await pairOf(victim);
    const sid = await sessionOf(victim);
    const bystanderPair = await pairOf(bystander);
    const owner = (await refresh(stolen.refreshToken)).json() as Pair; // the owner rotates first
    const versionBefore = await tokenVersion(victim.id);

    clock.advance(1); // no grace by default: one millisecond or one week later is the same
    const replay = await refresh(stolen.refreshToken);
    expectUnauthenticated(replay);
    expect(replay.json()).toMatchObject({ error: expect.stringMatching(/reuse/) });

    expect(await tokenVersion(victim.id)).toBe(versionBefore + 1);
    expect(await liveFamilies(victim.id)).toBe(0);
    expect(await app.db.prisma.session.count({ where: { userId: victim.id } })).toBe(0);
    for (const token of [owner.accessToken, otherDevice.accessToken]) expectUnauthenticated(await keysWith(bearer(token)));
    for (const token of [owner.refreshToken, otherDevice.refreshToken]) expectUnauthenticated(await refresh(token));
    expectUnauthenticated(await keysWithSession(sid));
    // Nobody else was touched.
    expect((await keysWith(bearer(bystanderPair.accessToken))).statusCode).toBe(200);
    expect((await refresh(bystanderPair.refreshToken)).statusCode).toBe(200);
  });

  it("the thief rotating first does not help: the owner's next refresh is reuse and ends the thief's pair too", async () => {
    const victim = await newUser();
    const pair = await pairOf(victim);
    const thief = (await refresh(pair.refreshToken)).json() as Pair;
    expectUnauthenticated(await refresh(pair.refreshToken)); // the owner, unaware
    expectUnauthenticated(await keysWith(bearer(thief.accessToken)));
    expectUnauthenticated(await refresh(thief.refreshToken));
  });
});

describe('race of N presentations of one refresh token', () => {
  it('exactly one wins; the other presentations are reuse and revoke the user, the winner included', async () => {
    const victim = await newUser();
    const { refreshToken } = await pairOf(victim);
    const responses = await Promise.all(Array.from({ length: 8 }, () => refresh(refreshToken)));
    expect(responses.filter((r) => r.statusCode === 200)).toHaveLength(1);
    expect(responses.filter((r) => r.statusCode === 401)).toHaveLength(7);
    // One new pair was minted, and the whole sign-in is gone with it: no refresh token of the user is left.
    expect(await app.db.prisma.refreshToken.count({ where: { userId: victim.id } })).toBe(0);
    expect(await app.db.prisma.session.count({ where: { userId: victim.id } })).toBe(0);
    const winner = responses.find((r) => r.statusCode === 200)!.json() as Pair;
    expectUnauthenticated(await keysWith(bearer(winner.accessToken)));
  });
});

describe('grace window only when REFRESH_REUSE_GRACE_MS is set', () => {
  let graceApp: FastifyInstance;
  beforeAll(async () => {
    graceApp = await createAuthTestApp({ clock, config: { refreshReuseGraceMs: 5_000, rateLimits: LIMITS } });
  });
  afterAll(() => graceApp.close());

  it('within the window a second presentation answers 409 and revokes nothing; after it, it is reuse', async () => {
    const user = await createUser(graceApp, { email: 'grace@example.com' });
    const pair = (await login(graceApp, { email: user.email, password: user.password })).json() as Pair;
    const sid = (await login(graceApp, { email: user.email, password: user.password, session: true })).cookies.find((c) => c.name === 'sid')!.value;
    const graceRefresh = (token: string) => graceApp.inject({ method: 'POST', url: '/auth/refresh', payload: { refreshToken: token } });

    const winner = (await graceRefresh(pair.refreshToken)).json() as Pair;
    clock.advance(4_000);
    const duplicate = await graceRefresh(pair.refreshToken);
    expect(duplicate.statusCode).toBe(409);
    expect(duplicate.json()).toMatchObject({ code: 40900 });
    expect((await graceApp.inject({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(winner.accessToken) })).statusCode).toBe(200);
    expect((await graceApp.inject({ method: 'GET', url: '/api/v1/api-keys', cookies: { sid } })).statusCode).toBe(200);

    clock.advance(2_000); // 6 s after the spend: past the 5 s window
    expect((await graceRefresh(pair.refreshToken)).statusCode).toBe(401);
    expect((await graceApp.inject({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(winner.accessToken) })).statusCode).toBe(401);
    expect((await graceApp.inject({ method: 'GET', url: '/api/v1/api-keys', cookies: { sid } })).statusCode).toBe(401);
  });
});

describe('access token without exp (never expires)', () => {
  const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  /** Signed with the real access secret, so only the missing `exp` can make the server refuse it. */
  function foreverToken(userId: number, ver: number): string {
    const body = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ userId, type: 'access', ver, jti: randomUUID(), iat: Math.floor(clock.now() / 1000) })}`;
    return `${body}.${createHmac('sha256', app.config.secrets.jwtAccess).update(body).digest('base64url')}`;
  }

  it('is refused by REST and GraphQL', async () => {
    const user = await newUser();
    const token = foreverToken(user.id, await tokenVersion(user.id));
    expectUnauthenticated(await keysWith(bearer(token)));
    const graphql = await app.inject({ method: 'POST', url: '/graphql', headers: bearer(token), payload: { query: '{ currentUser { id email } }' } });
    expect(graphql.statusCode).toBe(401);
    expect(JSON.stringify(graphql.json())).not.toContain(user.email);
  });

  it('is refused on the WebSocket (connectionParams): close 4403', async () => {
    const user = await newUser();
    const token = foreverToken(user.id, await tokenVersion(user.id));
    const { ws } = await listen(app);
    const client = wsClient(ws, { authorization: `Bearer ${token}` });
    try {
      const subscription = new Subscription(client, 'subscription { postCreated { id } }');
      expect(await subscription.failure()).toMatchObject({ code: 4403, reason: 'Invalid access token' });
    } finally {
      await client.dispose();
    }
  });
});
