// The typed client against the real app over real HTTP: typed REST and GraphQL calls, and the seed §4.2 refresh rules
// (one shared refresh for concurrent 401s, the refresh never retried, 401 from refresh = logout, 409 = not a logout).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase } from '@users-posts/db/testing';
import type { User } from '@users-posts/contracts';
import { buildApp } from '../../../apps/api/src/app.js';
import { ManualClock } from '../../../apps/api/src/auth/clock.js';
import { hashPassword } from '../../../apps/api/src/auth/credentials/passwords.js';
import { testConfig } from '../../../apps/api/test/support/config.js';
import { createApiClient, gql, PostsPageDocument, sha256Hex, UserDocument, type LoggedOutEvent, type TokenPair } from '../src/index.js';
import { repoRoot } from '../../../apps/api/src/paths.js';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const PASSWORD = 'client-password-1';

let app: Awaited<ReturnType<typeof buildApp>>;
let clock: ManualClock;
let baseUrl: string;
let userId: number;
/** Every request any client sent, as `METHOD path`, in order. */
const sent: string[] = [];
/** The status of every `POST /auth/refresh`, in order. */
const refreshStatuses: number[] = [];

/** The real fetch, recording what goes over the wire. */
const countingFetch: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const line = `${request.method} ${new URL(request.url).pathname}`;
  sent.push(line);
  const response = await fetch(request);
  if (line === 'POST /auth/refresh') refreshStatuses.push(response.status);
  return response;
};
const refreshesSince = (mark: number) => sent.slice(mark).filter((line) => line === 'POST /auth/refresh').length;

function newClient(tokens: TokenPair | null = null) {
  const loggedOut: LoggedOutEvent[] = [];
  const api = createApiClient({ baseUrl, fetch: countingFetch, tokens, onLoggedOut: (event) => loggedOut.push(event) });
  return { api, loggedOut };
}
async function loggedInClient() {
  const client = newClient();
  const login = await client.api.auth.login({ email: 'cleo@example.com', password: PASSWORD });
  expect(login.response.status).toBe(200);
  return client;
}

const currentUser = gql<{ currentUser: Pick<User, 'id' | 'email'> }>('query Me { currentUser { id email } }');

beforeAll(async () => {
  clock = new ManualClock(Date.parse('2026-11-22T10:00:00Z'));
  // The 409 rule of the client needs a server that answers 409: one that opted into REFRESH_REUSE_GRACE_MS.
  app = await buildApp(testConfig({ refreshReuseGraceMs: 10_000, rateLimits: { loginMax: 1000, refreshMax: 1000 } }), {
    database: await createTestDatabase(),
    clock,
  });
  const user = await app.db.prisma.user.create({ data: { name: 'Cleo', email: 'cleo@example.com', passwordHash: await hashPassword(PASSWORD) } });
  userId = user.id;
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('app is not listening on TCP');
  baseUrl = `http://127.0.0.1:${address.port}`;
});
afterAll(() => app.close());

describe('typed REST and GraphQL calls', () => {
  it('logs in, reads a user, lists and creates API keys, queries GraphQL', async () => {
    const { api } = await loggedInClient();
    expect(api.auth.tokens).toEqual({ accessToken: expect.any(String), refreshToken: expect.any(String) });

    const user = await api.rest.GET('/api/v1/users/{id}', { params: { path: { id: userId } } });
    expect(user.response.status).toBe(200);
    // Typed from the contract: `data.data` is the User schema.
    const name: string | undefined = user.data?.data.name;
    expect(name).toBe('Cleo');
    expect(user.data).toMatchObject({ code: 0, data: { id: userId, email: 'cleo@example.com' } });

    const before = await api.rest.GET('/api/v1/api-keys');
    expect(before.response.status).toBe(200);
    expect(before.data?.data).toEqual({ items: [], total: 0 });

    const created = await api.rest.POST('/api/v1/api-keys', { body: { name: 'ci' } });
    expect(created.response.status).toBe(201);
    const key: string | undefined = created.data?.data.key;
    expect(key).toEqual(expect.any(String));

    const after = await api.rest.GET('/api/v1/api-keys');
    expect(after.data?.data.items.map((k) => k.name)).toEqual(['ci']);

    const me = await api.graphql(currentUser);
    expect(me.errors).toBeUndefined();
    expect(me.data?.currentUser).toEqual({ id: String(userId), email: 'cleo@example.com' });
  });

  it('returns the typed error of a failed login and holds no pair', async () => {
    const { api } = newClient();
    const login = await api.auth.login({ email: 'cleo@example.com', password: 'wrong-password' });
    expect(login.response.status).toBe(401);
    expect(login.error).toMatchObject({ success: false, error: expect.any(String) });
    expect(api.auth.tokens).toBeNull();
  });
});

describe('safe retries (Idempotency-Key)', () => {
  it('attack on the wire (lost answer): a create whose answer never arrives is sent again with the same key and runs once', async () => {
    const { api: login } = await loggedInClient();
    const keys: string[] = [];
    let lose = true;
    // The request reaches the server and runs; its answer is lost (the connection resets): fetch throws.
    const lossyFetch: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      if (request.method !== 'POST' || !new URL(request.url).pathname.endsWith('/posts')) return fetch(request);
      keys.push(request.headers.get('idempotency-key') ?? '');
      const response = await fetch(request);
      if (!lose) return response;
      lose = false;
      await response.body?.cancel();
      throw new TypeError('fetch failed: connection reset');
    };
    const api = createApiClient({ baseUrl, fetch: lossyFetch, tokens: login.auth.tokens });
    const created = await api.rest.POST('/api/v1/users/{id}/posts', {
      params: { path: { id: userId } },
      body: { title: 'Sent once', content: 'lost answer' },
    });
    expect(created.response.status).toBe(201);
    expect(created.response.headers.get('idempotent-replayed')).toBe('true');
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(await app.db.prisma.post.count({ where: { title: 'Sent once' } })).toBe(1);
    expect(created.data?.data.title).toBe('Sent once');
  });
});

describe('ETags', () => {
  /** A fetch that records each request's If-None-Match / If-Match and the status the server answered. */
  function recording() {
    const exchanges: { method: string; ifNoneMatch: string | null; ifMatch: string | null; status: number }[] = [];
    const recordingFetch: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      const response = await fetch(request);
      exchanges.push({
        method: request.method,
        ifNoneMatch: request.headers.get('if-none-match'),
        ifMatch: request.headers.get('if-match'),
        status: response.status,
      });
      return response;
    };
    return { exchanges, recordingFetch };
  }

  it('reads a resource again with If-None-Match and hands the 304 to the caller as the kept answer', async () => {
    const { exchanges, recordingFetch } = recording();
    const api = createApiClient({ baseUrl, fetch: recordingFetch });
    const first = await api.rest.GET('/api/v1/users/{id}', { params: { path: { id: userId } } });
    const again = await api.rest.GET('/api/v1/users/{id}', { params: { path: { id: userId } } });
    expect(again.response.status).toBe(200);
    expect(again.data).toEqual(first.data);
    const etag = first.response.headers.get('etag');
    expect(etag).toMatch(/^"\d+"$/);
    expect(exchanges).toEqual([
      { method: 'GET', ifNoneMatch: null, ifMatch: null, status: 200 },
      { method: 'GET', ifNoneMatch: etag, ifMatch: null, status: 304 },
    ]);

    // What was kept for the anonymous caller is not what a logged-in one revalidates.
    const { api: member } = await loggedInClient();
    const asMember = createApiClient({ baseUrl, fetch: recordingFetch, tokens: member.auth.tokens });
    exchanges.length = 0;
    await asMember.rest.GET('/api/v1/users/{id}', { params: { path: { id: userId } } });
    // An authenticated answer is `Cache-Control: no-store`: its body is not kept, so it is not revalidated either.
    await asMember.rest.GET('/api/v1/users/{id}', { params: { path: { id: userId } } });
    expect(exchanges).toEqual([
      { method: 'GET', ifNoneMatch: null, ifMatch: null, status: 200 },
      { method: 'GET', ifNoneMatch: null, ifMatch: null, status: 200 },
    ]);
  });

  it('conditionalWrites: a write based on a stale read gets 412 and overwrites nothing; after a fresh read it goes through', async () => {
    const { api: login } = await loggedInClient();
    const { exchanges, recordingFetch } = recording();
    const careful = createApiClient({ baseUrl, fetch: recordingFetch, tokens: login.auth.tokens, etags: { conditionalWrites: true } });
    const other = createApiClient({ baseUrl, tokens: login.auth.tokens });
    await careful.rest.GET('/api/v1/users/{id}', { params: { path: { id: userId } } });
    expect(
      (await other.rest.PATCH('/api/v1/users/{id}', { params: { path: { id: userId } }, body: { name: 'Changed elsewhere' } })).response.status,
    ).toBe(200);

    const stale = await careful.rest.PATCH('/api/v1/users/{id}', { params: { path: { id: userId } }, body: { name: 'Stale overwrite' } });
    expect(stale.response.status).toBe(412);
    expect(exchanges.at(-1)?.ifMatch).toMatch(/^"\d+-\d+"$/); // the ETag of the user's own view (e-mail shown)
    expect((await app.db.prisma.user.findUniqueOrThrow({ where: { id: userId } })).name).toBe('Changed elsewhere');

    await careful.rest.GET('/api/v1/users/{id}', { params: { path: { id: userId } } });
    const fresh = await careful.rest.PATCH('/api/v1/users/{id}', { params: { path: { id: userId } }, body: { name: 'Cleo' } });
    expect(fresh.response.status).toBe(200);
    expect((await app.db.prisma.user.findUniqueOrThrow({ where: { id: userId } })).name).toBe('Cleo');
  });
});

describe('attack: one user’s ETags sent with another user’s writes (issue 31, item 9)', () => {
  it('keeps what it knows per signed-in user, and a login as another user starts from nothing', async () => {
    const eve = await app.db.prisma.user.create({ data: { name: 'Eve', email: 'eve@example.com', passwordHash: await hashPassword(PASSWORD) } });
    const exchanges: { method: string; ifMatch: string | null; status: number }[] = [];
    const recordingFetch: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      const response = await fetch(request);
      exchanges.push({ method: request.method, ifMatch: request.headers.get('if-match'), status: response.status });
      return response;
    };
    const api = createApiClient({ baseUrl, fetch: recordingFetch, etags: { conditionalWrites: true } });
    await api.auth.login({ email: 'cleo@example.com', password: PASSWORD });
    await api.rest.GET('/api/v1/users/{id}', { params: { path: { id: eve.id } } }); // Cleo reads Eve: an ETag kept for Cleo

    await api.auth.login({ email: 'eve@example.com', password: PASSWORD });
    const write = await api.rest.PATCH('/api/v1/users/{id}', { params: { path: { id: eve.id } }, body: { age: 30 } });
    expect(write.response.status).toBe(200);
    // Eve never read herself: her write carries no If-Match (it carried Cleo's, both keyed `user:undefined`, before).
    expect(exchanges.at(-1)).toEqual({ method: 'PATCH', ifMatch: null, status: 200 });
  });
});

describe('GraphQL documents by hash (graphqlDocuments: "hash")', () => {
  it('sends the hash alone, and the text once more when the server answers PERSISTED_QUERY_NOT_FOUND', async () => {
    // This app has no manifest: the hash is unknown, the text runs.
    const bodies: unknown[] = [];
    const recordingFetch: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      bodies.push(await request.clone().json());
      return fetch(request);
    };
    const api = createApiClient({ baseUrl, fetch: recordingFetch, graphqlDocuments: 'hash' });
    const result = await api.graphql(UserDocument, { id: String(userId) });
    expect(result).toEqual({
      // Anonymous: another user's e-mail reads "" (SPEC §3.1).
      data: { user: { id: String(userId), name: 'Cleo', email: '', role: 'USER', version: expect.any(Number) } },
    });
    expect(bodies).toEqual([
      { documentId: `sha256:${await sha256Hex(UserDocument)}`, variables: { id: String(userId) } },
      { query: UserDocument, variables: { id: String(userId) } },
    ]);
  });

  it('runs in one request on a server that allows only the trusted documents of its manifest', async () => {
    const trusted = await buildApp(
      testConfig({ persistedDocuments: { file: path.join(repoRoot, 'packages/client/persisted-documents.json'), trustedOnly: true } }),
      { database: await createTestDatabase() },
    );
    try {
      await trusted.listen({ host: '127.0.0.1', port: 0 });
      const { port } = trusted.server.address() as AddressInfo;
      let requests = 0;
      const api = createApiClient({
        baseUrl: `http://127.0.0.1:${port}`,
        fetch: (input, init) => (requests++, fetch(input, init)),
        graphqlDocuments: 'hash',
      });
      const page = await api.graphql(PostsPageDocument, { first: 2 });
      expect(page).toEqual({ data: { postsConnection: { edges: [], pageInfo: { endCursor: null, hasNextPage: false }, totalCount: 0 } } });
      expect(requests).toBe(1);
      // The same server refuses the text a client that was not built against its manifest sends.
      const adHoc = await createApiClient({ baseUrl: `http://127.0.0.1:${port}` }).graphql('{ users { id } }');
      expect(adHoc.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_ID_REQUIRED');
    } finally {
      await trusted.close();
    }
  });
});

describe('account flows (SPEC §3.2)', () => {
  it('changes the password and goes on with the renewed pair; the other sign-in ends; sign-ins listed and ended', async () => {
    await app.db.prisma.user.create({ data: { name: 'Dora', email: 'dora@example.com', passwordHash: await hashPassword(PASSWORD) } });
    const { api } = newClient();
    const other = newClient();
    expect((await api.auth.login({ email: 'dora@example.com', password: PASSWORD })).response.status).toBe(200);
    expect((await other.api.auth.login({ email: 'dora@example.com', password: PASSWORD })).response.status).toBe(200);
    const before = api.auth.tokens!;

    const changed = await api.account.changePassword({ currentPassword: PASSWORD, newPassword: 'dora has a new passphrase' });
    expect(changed.response.status).toBe(200);
    expect(api.auth.tokens).not.toEqual(before);

    // The client goes on with the renewed pair at once (no refresh); the other sign-in is the only other one, and ended.
    const mark = sent.length;
    const signIns = await api.account.listSessions();
    expect(signIns.data?.data.items).toEqual([expect.objectContaining({ kind: 'tokens', current: true })]);
    expect(refreshesSince(mark)).toBe(0);
    expect((await other.api.rest.GET('/api/v1/api-keys')).response.status).toBe(401);
    expect(other.loggedOut).toHaveLength(1);

    expect((await api.account.forgotPassword('dora@example.com')).response.status).toBe(202);
    const current = signIns.data!.data.items[0]!.id;
    expect((await api.account.endSession(current)).response.status).toBe(204);
    expect((await api.rest.GET('/api/v1/api-keys')).response.status).toBe(401);
  });
});

describe('seed §4.2 token refresh', () => {
  it('five concurrent calls with an expired access token → exactly one refresh, all five repeated and succeed', async () => {
    const { api, loggedOut } = await loggedInClient();
    const before = api.auth.tokens!;
    clock.advance(16 * MINUTE); // the access token (15 min) has expired, the refresh token (7 days) has not

    const mark = sent.length;
    const results = await Promise.all([
      api.rest.GET('/api/v1/users/{id}', { params: { path: { id: userId } } }),
      api.rest.GET('/api/v1/api-keys'),
      api.rest.GET('/api/v1/users', { params: { query: { page: 1, pageSize: 5 } } }),
      // a body is replayed too
      api.rest.POST('/api/v1/users/{id}/posts', { params: { path: { id: userId } }, body: { title: 'made-during-refresh', content: 'x' } }),
      api.graphql(currentUser),
    ]);
    const [user, keys, users, created, me] = results;

    expect(refreshesSince(mark)).toBe(1);
    expect(user.response.status).toBe(200);
    expect(keys.response.status).toBe(200);
    expect(users.response.status).toBe(200);
    expect(created.response.status).toBe(201);
    expect(created.data?.data.title).toBe('made-during-refresh');
    expect(me.data?.currentUser.id).toBe(String(userId));
    // Each of the five went out twice: once with the expired token (401), once repeated after the refresh.
    expect(sent.length - mark).toBe(5 * 2 + 1);
    expect(api.auth.tokens).not.toEqual(before);
    expect(loggedOut).toEqual([]);

    // The new pair is used from now on: no further refresh.
    const again = sent.length;
    expect((await api.rest.GET('/api/v1/api-keys')).response.status).toBe(200);
    expect(sent.length - again).toBe(1);
  });

  it('a refresh answered 401 ends the login: pair cleared, onLoggedOut fired once, nothing retried', async () => {
    const { api, loggedOut } = await loggedInClient();
    clock.advance(8 * DAY); // both tokens expired

    const mark = sent.length;
    const results = await Promise.all([
      api.rest.GET('/api/v1/api-keys'),
      api.rest.GET('/api/v1/users/{id}', { params: { path: { id: userId } } }),
      api.graphql(currentUser),
    ]);
    expect(results.map((r) => ('response' in r ? r.response.status : 'graphql'))).toEqual([401, 401, 'graphql']);
    expect(results[0].error).toMatchObject({ code: 40100 });
    expect(results[2].errors?.length).toBeGreaterThan(0); // the original 401 in GraphQL shape
    expect(refreshesSince(mark)).toBe(1);
    expect(refreshStatuses.at(-1)).toBe(401);
    expect(sent.length - mark).toBe(3 + 1); // three attempts, one refresh, no repeats, no second refresh
    expect(api.auth.tokens).toBeNull();
    expect(loggedOut).toHaveLength(1);
    expect(loggedOut[0]!.status).toBe(401);

    // Logged out: the next call goes out without a token and does not try to refresh.
    const later = sent.length;
    expect((await api.rest.GET('/api/v1/api-keys')).response.status).toBe(401);
    expect(sent.slice(later)).toEqual(['GET /api/v1/api-keys']);
    expect(loggedOut).toHaveLength(1);
  });

  it('a refresh answered 409 (rotated by a concurrent request) is not a logout', async () => {
    const first = await loggedInClient();
    const pair = first.api.auth.tokens!;
    const second = newClient(pair); // another tab holding the same pair in its own store
    clock.advance(16 * MINUTE);

    expect((await first.api.rest.GET('/api/v1/api-keys')).response.status).toBe(200); // wins the rotation

    const mark = sent.length;
    const lost = await second.api.rest.GET('/api/v1/api-keys');
    expect(refreshesSince(mark)).toBe(1); // not retried
    expect(refreshStatuses.at(-1)).toBe(409); // the same refresh token again within the grace window
    expect(sent.length - mark).toBe(2);
    expect(lost.response.status).toBe(401); // the original error is returned
    expect(second.loggedOut).toEqual([]);
    expect(second.api.auth.tokens).toEqual(pair); // still logged in
    expect(first.loggedOut).toEqual([]);

    // Taking the winner's pair (a shared store does this by itself) continues without a new login.
    second.api.auth.setTokens(first.api.auth.tokens);
    expect((await second.api.rest.GET('/api/v1/api-keys')).response.status).toBe(200);
  });

  it('a shared token store lets a second client use the pair the first one refreshed', async () => {
    const { api } = await loggedInClient();
    const shared = api.auth.tokens!;
    const store = {
      pair: shared as TokenPair | null,
      get() {
        return this.pair;
      },
      set(next: TokenPair | null) {
        this.pair = next;
      },
    };
    const tabA = createApiClient({ baseUrl, fetch: countingFetch, store });
    const tabB = createApiClient({ baseUrl, fetch: countingFetch, store });
    clock.advance(16 * MINUTE);

    const mark = sent.length;
    expect((await tabA.rest.GET('/api/v1/api-keys')).response.status).toBe(200);
    expect((await tabB.rest.GET('/api/v1/api-keys')).response.status).toBe(200);
    expect(refreshesSince(mark)).toBe(1);
    expect(sent.length - mark).toBe(2 + 1 + 1);
  });
});
