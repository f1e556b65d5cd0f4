// One authorization per operation, whatever the transport (SPEC §0.1, §2; issue 39): an attacker who opened a WebSocket
// or an SSE stream while holding rights keeps none of them once they are gone — each operation on the socket is
// authorized as an HTTP request made at that moment would be, and a running subscription's events are shaped for the
// subscriber's rights of now. Also: the socket shares the address's sign-up bucket, and bulk PATCH meets the single
// write's rules. Each of these attacks succeeded before the fix (websocket.ts kept the principal of connection_init).
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import type { FormattedExecutionResult } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { ManualClock } from '../../src/auth/clock.js';
import type { Principal } from '../../src/auth/principal.js';
import { createGraphQLContext } from '../../src/graphql/schema/context.js';
import { accessTokenOf, bearer, createAuthTestApp, createUser, login, type TestUser } from '../support/auth.js';
import { listen, SseStream, Subscription, watchSubscribers, wsClient } from '../support/ws.js';

const POST_CREATED = 'subscription { postCreated { title author { email } } }';
const clock = new ManualClock();
let app: FastifyInstance;
let urls: { http: string; ws: string };
let subscribers: ReturnType<typeof watchSubscribers>;
let alice: TestUser;
let root: TestUser;
let rootToken: string;
const clients: Client[] = [];

beforeAll(async () => {
  app = await createAuthTestApp({ clock });
  urls = await listen(app);
  subscribers = watchSubscribers(app);
  alice = await createUser(app, { email: 'alice@example.com' });
  root = await createUser(app, { email: 'root@example.com', role: 'ADMIN' });
  rootToken = await accessTokenOf(app, root);
}, 60_000);
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.dispose()));
  await subscribers.until(0);
});
afterAll(() => app?.close());

/**
 * One socket held open for the whole test (not lazy: graphql-ws's default closes an idle socket and opens a new one,
 * with a new connection_init, for the next operation — the attack is about an old socket); `connections` counts the
 * handshakes, so a test proves it stayed on one.
 */
function socket(token?: string): Client & { connections: () => number } {
  let connections = 0;
  const client = createClient({
    url: urls.ws,
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 0,
    ...(token ? { connectionParams: { authorization: `Bearer ${token}` } } : {}),
    on: { connected: () => void connections++ },
  });
  clients.push(client);
  return Object.assign(client, { connections: () => connections });
}

async function run<Data = Record<string, unknown>>(client: Client, query: string): Promise<FormattedExecutionResult<Data>> {
  const { value } = (await client.iterate<Data>({ query }).next()) as { value: FormattedExecutionResult<Data> };
  return value;
}

const codes = (result: FormattedExecutionResult) => result.errors?.map((error) => error.extensions?.['code']);

/** A fresh ADMIN (beside `root`, so the last-ADMIN rule never stands in the way) and its access token. */
async function freshAdmin(name: string): Promise<{ user: TestUser; token: string }> {
  const user = await createUser(app, { email: `${name}@example.com`, role: 'ADMIN' });
  return { user, token: await accessTokenOf(app, user) };
}

/** `root` demotes `user` over REST (another door, another connection). */
async function demote(user: TestUser): Promise<void> {
  const response = await app.inject({ method: 'PATCH', url: `/api/v1/users/${user.id}`, headers: bearer(rootToken), payload: { role: 'USER' } });
  expect(response.statusCode).toBe(200);
}

async function postAsAlice(title: string): Promise<void> {
  const token = await accessTokenOf(app, alice);
  const response = await app.inject({
    method: 'POST',
    url: `/api/v1/users/${alice.id}/posts`,
    headers: bearer(token),
    payload: { title, content: 'c' },
  });
  expect(response.statusCode).toBe(201);
}

describe('a WebSocket opened with rights keeps none of them once they are gone', () => {
  it('attack: an ADMIN demoted over REST can no longer delete users, re-promote itself or read e-mails on its open socket', async () => {
    const { user: mallory, token } = await freshAdmin('mallory');
    const client = socket(token);
    expect(await run(client, `{ user(id: "${alice.id}") { email } }`)).toEqual({ data: { user: { email: 'alice@example.com' } } });

    await demote(mallory);

    expect(codes(await run(client, `mutation { deleteUser(id: "${alice.id}") }`))).toEqual(['FORBIDDEN']);
    const promoted = await run(client, `mutation { updateUser(id: "${mallory.id}", input: { role: ADMIN }) { role } }`);
    expect(codes(promoted)).toEqual(['FORBIDDEN']);
    expect(await run(client, `{ user(id: "${alice.id}") { email } }`)).toEqual({ data: { user: { email: '' } } });
    expect(client.connections()).toBe(1); // every operation above went over the socket opened as an ADMIN
    // Nothing was changed: alice is there, mallory is still a USER.
    expect(await app.db.prisma.user.findUnique({ where: { id: alice.id }, select: { id: true } })).not.toBeNull();
    expect((await app.db.prisma.user.findUniqueOrThrow({ where: { id: mallory.id } })).role).toBe('USER');
  });

  it('attack: a login that stopped being recent cannot change its own e-mail over a socket opened while it was recent', async () => {
    const bob = await createUser(app, { email: 'bob@example.com' });
    const client = socket(await accessTokenOf(app, bob));
    expect(await run(client, '{ currentUser { email } }')).toEqual({ data: { currentUser: { email: 'bob@example.com' } } });

    clock.advance(app.identity.recentAuthMs + 1_000); // the login is no longer recent; the access token still valid

    const changed = await run(client, `mutation { updateUser(id: "${bob.id}", input: { email: "thief@example.com" }) { email } }`);
    expect(changed.errors?.map((error) => error.extensions)).toEqual([
      expect.objectContaining({ code: 'FORBIDDEN', reason: 'REAUTHENTICATION_REQUIRED' }),
    ]);
    expect((await app.db.prisma.user.findUniqueOrThrow({ where: { id: bob.id } })).email).toBe('bob@example.com');
    expect(client.connections()).toBe(1);
  });

  it('attack: a demoted ADMIN’s running postCreated subscription stops showing authors’ e-mails at once', async () => {
    const { user: mallory, token } = await freshAdmin('mallory-ws');
    const subscription = new Subscription<{ postCreated: { title: string; author: { email: string } } }>(socket(token), POST_CREATED);
    await subscribers.until(1);

    await postAsAlice('before');
    expect((await subscription.next()).data?.postCreated.author.email).toBe('alice@example.com');

    await demote(mallory);
    await postAsAlice('after');
    expect((await subscription.next()).data).toEqual({ postCreated: { title: 'after', author: { email: '' } } });
  });

  it('attack: a socket of a deleted user is closed (4403) and runs nothing more', async () => {
    const { user: gone, token } = await freshAdmin('gone');
    const client = wsClient(urls.ws, { authorization: `Bearer ${token}` });
    clients.push(client);
    expect(codes(await run(client, '{ currentUser { id } }'))).toBeUndefined();
    await app.inject({ method: 'DELETE', url: `/api/v1/users/${gone.id}`, headers: bearer(rootToken) });
    const after = await run(client, `mutation { deleteUser(id: "${alice.id}") }`).catch((error: unknown) => error);
    expect(after).not.toEqual({ data: { deleteUser: true } });
    expect(client.closes.map((closed) => closed.code)).toContain(4403);
    expect(await app.db.prisma.user.findUnique({ where: { id: alice.id }, select: { id: true } })).not.toBeNull();
  });
});

describe('an SSE stream opened with rights keeps none of them once they are gone', () => {
  it('attack: a demoted ADMIN’s stream on the session cookie stops showing authors’ e-mails at once', async () => {
    const { user: mallory } = await freshAdmin('mallory-sse');
    const session = await login(app, { email: mallory.email, password: mallory.password, session: true });
    const sid = session.cookies.find((cookie) => cookie.name === 'sid')!.value;
    const stream = await SseStream.open(`${urls.http}/graphql?query=${encodeURIComponent(POST_CREATED)}`, { cookie: `sid=${sid}` });
    try {
      expect(stream.response.status).toBe(200);
      await subscribers.until(1);
      await postAsAlice('sse before');
      expect(JSON.parse((await stream.event())!.data)).toEqual({
        data: { postCreated: { title: 'sse before', author: { email: 'alice@example.com' } } },
      });

      await demote(mallory);
      await postAsAlice('sse after');
      expect(JSON.parse((await stream.event())!.data)).toEqual({ data: { postCreated: { title: 'sse after', author: { email: '' } } } });
    } finally {
      stream.close();
    }
  });
});

describe('the rules of HTTP on the other paths', () => {
  it('attack: an ADMIN on an API key cannot change its own e-mail through bulk PATCH (no recent login), nothing changed', async () => {
    const { user: admin, token } = await freshAdmin('bulk-admin');
    const created = await app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: bearer(token), payload: { name: 'script' } });
    expect(created.statusCode).toBe(201);
    const key = (created.json() as { data: { key: string } }).data.key;
    const response = await app.inject({
      method: 'PATCH',
      url: `/api/v1/users?api_key=${encodeURIComponent(key)}`,
      payload: { ids: [admin.id], data: { email: 'taken-over@example.com' } },
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({ code: 40301 });
    expect((await app.db.prisma.user.findUniqueOrThrow({ where: { id: admin.id } })).email).toBe(admin.email);
  });

  it('attack: an address whose sign-up budget is spent over HTTP creates no account over a socket, anonymous or signed in', async () => {
    const limited = await createAuthTestApp({ config: { rateLimits: { signup: { max: 2, windowMs: 3_600_000 } } } });
    try {
      const limitedUrls = await listen(limited);
      for (const n of [1, 2]) {
        const response = await fetch(`${limitedUrls.http}/api/v1/users`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: `h${n}`, email: `http${n}@example.com` }),
        });
        expect(response.status).toBe(201);
      }
      const carol = await createUser(limited, { email: 'carol@example.com' });
      const signUp = (client: Client, email: string) => run(client, `mutation { createUser(input: { name: "x", email: "${email}" }) { id } }`);
      const anonymousSocket = wsClient(limitedUrls.ws);
      const carolsSocket = wsClient(limitedUrls.ws, { authorization: `Bearer ${await accessTokenOf(limited, carol)}` });
      clients.push(anonymousSocket, carolsSocket);
      expect(codes(await signUp(anonymousSocket, 'ws-anon@example.com'))).toEqual(['RATE_LIMITED']);
      expect(codes(await signUp(carolsSocket, 'ws-carol@example.com'))).toEqual(['RATE_LIMITED']);
      expect(await limited.db.prisma.user.count({ where: { email: { startsWith: 'ws-' } } })).toBe(0);
    } finally {
      await Promise.all(clients.splice(0).map((client) => client.dispose()));
      await limited.close();
    }
  });
});

describe('by construction: a principal serves the operation it was verified for', () => {
  it('a transport handing a later operation the principal of an earlier one fails at that operation', () => {
    const principal: Principal = { kind: 'user', userId: 1, role: 'ADMIN', via: 'bearer', recentLogin: true };
    const connectionInit = {};
    const noSignup = async () => undefined;
    createGraphQLContext(app.services, principal, noSignup, connectionInit);
    // The same request (every operation of an HTTP batch) may share it …
    expect(() => createGraphQLContext(app.services, principal, noSignup, connectionInit)).not.toThrow();
    // … a later operation may not: it must be authorized afresh (websocket.ts did this before issue 39).
    expect(() => createGraphQLContext(app.services, principal, noSignup, { later: true })).toThrow(/authorize every operation/);
  });
});
