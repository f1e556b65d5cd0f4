// Attacks on users' e-mail addresses (SPEC §3.1, issue 29): an anonymous or ordinary caller trying every door and shape
// to read, search, sort or decode another user's address, and watching security events through a user's ETag. Each test
// names the attack and proves nothing leaked; the owner, ADMINs and signed requests still see the address.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../src/paths.js';
import { createTestApp } from '../support/app.js';
import { createAccount, type Account } from '../support/accounts.js';
import { signedUrl } from '../support/auth.js';
import { graphql } from '../support/graphql.js';
import { listen, Subscription, watchSubscribers, wsClient } from '../support/ws.js';

const MANIFEST = path.join(repoRoot, 'packages/client/persisted-documents.json');
let app: FastifyInstance;
let admin: Account;
let alice: Account;
let mallory: Account;
let urls: { http: string; ws: string };
const clients: ReturnType<typeof wsClient>[] = [];

beforeAll(async () => {
  app = await createTestApp({ persistedDocuments: { file: MANIFEST, trustedOnly: false } });
  admin = await createAccount(app, 'the-admin@example.com', 'ADMIN');
  alice = await createAccount(app, 'alice.secret@example.com');
  mallory = await createAccount(app, 'mallory@example.com');
  // Names unlike their addresses, so that a name seen is no clue to an address.
  for (const [account, name] of [
    [admin, 'Root'],
    [alice, 'Alice'],
    [mallory, 'Mallory'],
  ] as const) {
    await app.db.prisma.user.update({ where: { id: account.id }, data: { name } });
  }
  await app.db.prisma.post.create({ data: { title: 'By the admin', content: 'Hello', authorId: admin.id } });
  urls = await listen(app);
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.dispose()));
  await app.close();
});

const ADDRESSES = () => [admin.email, alice.email];
/** Fails when any of the cast's addresses (or a recognisable part of one) appears in `text`. */
function expectNoAddressIn(text: string): void {
  for (const address of ADDRESSES()) {
    expect(text).not.toContain(address);
    expect(text).not.toContain(address.split('@')[0]!);
  }
}

const rest = async (url: string, headers: Record<string, string> = {}) => {
  const response = await app.inject({ method: 'GET', url, headers });
  return { status: response.statusCode, body: response.json(), text: response.body, headers: response.headers };
};
const asMallory = () => mallory.headers;

describe('anonymous scrape of addresses over REST', () => {
  it.each([
    ['the administrators by role, with fields=email,role', '/api/v1/users?role=ADMIN&fields=email,role'],
    ['every user, page paging', '/api/v1/users?pageSize=100'],
    ['every user, cursor paging', '/api/v1/users?cursor=&limit=100'],
    ['every user, offset paging', '/api/v1/users?offset=0&limit=100'],
  ])('%s: every e-mail is "" and no emailVerified', async (_what, url) => {
    for (const headers of [{}, asMallory()]) {
      const { status, body, text } = await rest(url, headers);
      expect(status).toBe(200);
      expect(body.data.items.length).toBeGreaterThan(0);
      for (const item of body.data.items.filter((user: { id: number }) => user.id !== mallory.id || !('authorization' in headers))) {
        if ('email' in item) expect(item.email).toBe('');
        expect(item).not.toHaveProperty('emailVerified');
      }
      expectNoAddressIn(text);
    }
  });

  it('a single read, and the ETag of it, say nothing of the address', async () => {
    const anonymous = await rest(`/api/v1/users/${admin.id}`);
    expect(anonymous.body.data).toMatchObject({ id: admin.id, email: '', role: 'ADMIN' });
    expect(anonymous.body.data).not.toHaveProperty('emailVerified');
    expectNoAddressIn(anonymous.text + JSON.stringify(anonymous.headers));
  });

  it('the owner, an ADMIN and a signed request see the address', async () => {
    expect((await rest(`/api/v1/users/${alice.id}`, alice.headers)).body.data).toMatchObject({ email: alice.email, emailVerified: false });
    expect((await rest(`/api/v1/users/${alice.id}`, admin.headers)).body.data.email).toBe(alice.email);
    const signed = signedUrl(app, 'GET', `/api/v1/users/${alice.id}`).url;
    expect((await rest(signed)).body.data.email).toBe(alice.email);
  });
});

describe('finding an address by search or sort', () => {
  it('search by e-mail substring matches names only for anonymous and ordinary callers', async () => {
    for (const headers of [{}, asMallory()]) {
      for (const term of ['secret', 'alice.secret@', 'the-admin', '@example.com']) {
        const { body } = await rest(`/api/v1/users?q=${encodeURIComponent(term)}`, headers);
        expect(body.data.items).toEqual([]);
      }
    }
    const byAdmin = await rest('/api/v1/users?q=secret', admin.headers);
    expect(byAdmin.body.data.items.map((user: { id: number }) => user.id)).toEqual([alice.id]);
  });

  it.each(['sort=email', 'sortBy=-email', 'sort=email,desc', 'sort=email&order=desc'])(
    'sorting by e-mail (%s) is refused with 400 naming sort, for anonymous and ordinary callers',
    async (sort) => {
      for (const headers of [{}, asMallory()]) {
        const { status, body } = await rest(`/api/v1/users?${sort}`, headers);
        expect(status).toBe(400);
        expect(body.errors).toEqual([expect.objectContaining({ field: sort.startsWith('sortBy') ? 'sortBy' : 'sort' })]);
      }
      expect((await rest(`/api/v1/users?${sort}`, admin.headers)).status).toBe(200);
    },
  );

  it('a cursor, decoded, holds no address (sort by name, the sortable field nearest to it)', async () => {
    const { body } = await rest('/api/v1/users?cursor=&limit=1&sort=name');
    const cursor = body.data.nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    expectNoAddressIn(Buffer.from(cursor, 'base64url').toString('latin1') + Buffer.from(cursor, 'base64').toString('latin1'));
  });
});

describe('anonymous scrape of addresses over GraphQL', () => {
  it.each([
    ['users', '{ users { id email emailVerified } }', (data: Record<string, unknown>) => data.users],
    ['user(id)', '{ user(id: "ADMIN_ID") { id email emailVerified } }', (data: Record<string, unknown>) => [data.user]],
    ['post.author', '{ posts { author { id email emailVerified } } }', (data: { posts: { author: unknown }[] }) => data.posts.map((p) => p.author)],
    [
      'postsConnection edges',
      '{ postsConnection { edges { node { author { id email emailVerified } } } } }',
      (data: { postsConnection: { edges: { node: { author: unknown } }[] } }) => data.postsConnection.edges.map((edge) => edge.node.author),
    ],
  ] as const)('%s: email is "" and emailVerified null for other users', async (_what, document, usersOf) => {
    for (const headers of [{}, asMallory()]) {
      const result = await graphql(app, document.replace('ADMIN_ID', String(admin.id)), undefined, headers);
      expect(result.errors).toBeUndefined();
      const users = (usersOf as (data: unknown) => { id: string; email: string; emailVerified: boolean | null }[])(result.data);
      const others = users.filter((user) => Number(user.id) !== mallory.id || !('authorization' in headers));
      expect(others.length).toBeGreaterThan(0);
      for (const user of others) expect(user).toMatchObject({ email: '', emailVerified: null });
      expectNoAddressIn(JSON.stringify(result));
    }
  });

  it('currentUser and an ADMIN see the addresses', async () => {
    const own = await graphql(app, '{ currentUser { email emailVerified } }', undefined, alice.headers);
    expect(own.data).toEqual({ currentUser: { email: alice.email, emailVerified: false } });
    const all = await graphql<{ users: { id: string; email: string }[] }>(app, '{ users { id email } }', undefined, admin.headers);
    expect(all.data!.users.find((user) => Number(user.id) === alice.id)!.email).toBe(alice.email);
  });

  it('a trusted document selecting the e-mail, sent by its hash, shows "" to others', async () => {
    const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8')) as Record<string, string>;
    const [hash] = Object.entries(manifest).find(([, text]) => /\bemail\b/.test(text) && /\$id: ID!/.test(text)) ?? [];
    expect(hash).toEqual(expect.any(String));
    const response = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      payload: { documentId: `sha256:${hash}`, variables: { id: String(admin.id) } },
    });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('"email":""');
    expectNoAddressIn(response.body);
  });
});

describe('subscription payloads, per subscriber', () => {
  it('postCreated shows the author’s address to the author and an ADMIN, "" to an anonymous subscriber', async () => {
    const subscribers = watchSubscribers(app);
    const document = 'subscription { postCreated { title author { email emailVerified } } }';
    const open = (connectionParams?: Record<string, unknown>) => {
      const client = wsClient(urls.ws, connectionParams);
      clients.push(client);
      return new Subscription<{ postCreated: { author: { email: string; emailVerified: boolean | null } } }>(client, document);
    };
    const anonymous = open();
    const owner = open({ authorization: `Bearer ${alice.token}` });
    const byAdmin = open({ authorization: `Bearer ${admin.token}` });
    await subscribers.until(3);
    const created = await app.inject({
      method: 'POST',
      url: `/api/v1/users/${alice.id}/posts`,
      headers: alice.headers,
      payload: { title: 'Hello', content: 'World' },
    });
    expect(created.statusCode).toBe(201);
    expect((await anonymous.next()).data?.postCreated.author).toEqual({ email: '', emailVerified: null });
    expect((await owner.next()).data?.postCreated.author).toEqual({ email: alice.email, emailVerified: false });
    expect((await byAdmin.next()).data?.postCreated.author.email).toBe(alice.email);
  });
});

describe('watching security events through a user’s public version', () => {
  it('logout everywhere and refresh-token reuse move neither the version, nor updatedAt, nor the ETag', async () => {
    const victim = await createAccount(app, 'victim@example.com');
    const before = await rest(`/api/v1/users/${victim.id}`);
    const login = await app.inject({ method: 'POST', url: '/login', payload: { email: victim.email, password: 'password-123' } });
    const { refreshToken } = login.json() as { refreshToken: string };
    const rotated = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refreshToken } });
    expect(rotated.statusCode).toBe(200);
    const reuse = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refreshToken } });
    expect(reuse.statusCode).toBe(401); // reuse detected: every token of the user revoked (tokenVersion bumped)
    const again = await app.inject({ method: 'POST', url: '/login', payload: { email: victim.email, password: 'password-123' } });
    const headers = { authorization: `Bearer ${again.json().accessToken as string}` };
    const loggedOut = await app.inject({ method: 'POST', url: '/logout?all=true', headers });
    expect(loggedOut.statusCode).toBe(204);
    const after = await rest(`/api/v1/users/${victim.id}`);
    expect(after.headers.etag).toBe(before.headers.etag);
    expect(after.body.data.updatedAt).toBe(before.body.data.updatedAt);
    const version = await graphql(app, `{ user(id: "${victim.id}") { version } }`);
    expect(version.data).toEqual({ user: { version: 1 } });
    // A change of a shown field still moves it.
    await app.inject({ method: 'PATCH', url: `/api/v1/users/${victim.id}`, headers: admin.headers, payload: { name: 'Renamed' } });
    expect((await rest(`/api/v1/users/${victim.id}`)).headers.etag).not.toBe(before.headers.etag);
  });
});
