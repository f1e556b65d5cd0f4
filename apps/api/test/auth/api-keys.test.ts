// API keys (SPEC §3): created once-shown, listed without the secret, used as ?api_key=, revoked by DELETE; stored only hashed, never logged.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { createHash } from 'node:crypto';
import pino from 'pino';
import { bearer, accessTokenOf, createAuthTestApp, createUser, expectForbidden, expectUnauthenticated, type TestUser } from '../support/auth.js';

interface CreatedKey {
  id: number;
  name: string;
  prefix: string;
  key: string;
  createdAt: string;
}

let app: FastifyInstance;
let alice: TestUser;
let bob: TestUser;
let root: TestUser;
const tokens: Record<string, string> = {};
/** Everything the app logged (at `info`), one JSON line per entry. */
const logLines: string[] = [];
/** Every key created in this suite, to look for in the logs and the database. */
const createdKeys: string[] = [];

beforeAll(async () => {
  app = await createAuthTestApp({ config: { logLevel: 'info', rateLimits: { loginMax: 1000, refreshMax: 1000 } } });
  // Fastify's logger is pino; request loggers are children that inherit the root's destination through the prototype chain.
  (app.log as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] = { write: (line: string) => void logLines.push(line) };
  alice = await createUser(app, { email: 'alice@example.com' });
  bob = await createUser(app, { email: 'bob@example.com' });
  root = await createUser(app, { email: 'root@example.com', role: 'ADMIN' });
  for (const user of [alice, bob, root]) tokens[user.email] = await accessTokenOf(app, user);
});
afterAll(() => app.close());

const as = (user: TestUser) => bearer(tokens[user.email]!);

async function createKey(user: TestUser, name: string): Promise<CreatedKey> {
  const response = await app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: as(user), payload: { name } });
  expect(response.statusCode).toBe(201);
  const created = (response.json() as { data: CreatedKey }).data;
  createdKeys.push(created.key);
  return created;
}
const list = (headers: Record<string, string>, query = '') => app.inject({ method: 'GET', url: `/api/v1/api-keys${query}`, headers });
const remove = (id: number, headers: Record<string, string>) => app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${id}`, headers });
const withKey = (key: string, path = '/api/v1/api-keys') => app.inject({ method: 'GET', url: `${path}?api_key=${encodeURIComponent(key)}` });
const keyRow = (id: number) => app.db.prisma.apiKey.findUnique({ where: { id } });

describe('POST /api/v1/api-keys', () => {
  it('answers 201 with Location and the key, shown once, in the success envelope', async () => {
    const response = await app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: as(alice), payload: { name: 'CI pipeline' } });
    expect(response.statusCode).toBe(201);
    const body = response.json();
    expect(body).toEqual({
      code: 0,
      message: expect.any(String),
      data: { id: expect.any(Number), name: 'CI pipeline', prefix: expect.any(String), key: expect.any(String), createdAt: expect.any(String) },
    });
    const created = body.data as CreatedKey;
    createdKeys.push(created.key);
    expect(response.headers.location).toBe(`/api/v1/api-keys/${created.id}`);
    expect(new Date(created.createdAt).toISOString()).toBe(created.createdAt);
    expect(created.key.startsWith(created.prefix)).toBe(true);
    expect(created.key.length).toBeGreaterThan(created.prefix.length + 20);

    const listed = await list(as(alice));
    expect(listed.statusCode).toBe(200);
    const item = listed.json().data.items.find((entry: { id: number }) => entry.id === created.id);
    expect(item).toEqual({ id: created.id, name: 'CI pipeline', prefix: created.prefix, createdAt: created.createdAt });
    expect(listed.body).not.toContain(created.key);
  });

  it('stores only a hash of the key: the database never holds the key itself', async () => {
    const created = await createKey(alice, 'hashed');
    const row = await keyRow(created.id);
    expect(row).toMatchObject({ userId: alice.id, name: 'hashed', keyHash: createHash('sha256').update(created.key).digest('hex') });
    const secretPart = created.key.slice(created.prefix.length);
    const dump = await app.db.prisma.$queryRawUnsafe<{ row: string }[]>('SELECT row_to_json(k)::text AS row FROM api_keys k');
    for (const { row: text } of dump) {
      expect(text).not.toContain(created.key);
      expect(text).not.toContain(secretPart);
    }
  });

  it('refuses an anonymous caller with 401 and `error`, creating nothing', async () => {
    const before = await app.db.prisma.apiKey.count();
    expectUnauthenticated(await app.inject({ method: 'POST', url: '/api/v1/api-keys', payload: { name: 'anonymous' } }));
    expect(await app.db.prisma.apiKey.count()).toBe(before);
  });

  // Who may call is checked before contract validation (rest/plugin.ts).
  it('refuses an anonymous caller with 401 even when the body is invalid (nothing about the contract is revealed)', async () => {
    expectUnauthenticated(await app.inject({ method: 'POST', url: '/api/v1/api-keys', payload: {} }));
  });

  it.each([
    ['missing', {}],
    ['empty', { name: '' }],
    ['too long', { name: 'x'.repeat(101) }],
    ['not a string', { name: 42 }],
  ])('answers 422 naming `name` when it is %s, creating nothing', async (_case, payload) => {
    const before = await app.db.prisma.apiKey.count();
    const response = await app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: as(alice), payload });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ code: 42200, message: expect.any(String), errors: [expect.objectContaining({ field: 'name' })] });
    expect(await app.db.prisma.apiKey.count()).toBe(before);
  });

  it('accepts a name of exactly 100 characters', async () => {
    expect((await createKey(alice, 'n'.repeat(100))).name).toBe('n'.repeat(100));
  });

  it('attack (key hoarding): 110 creations at once never leave the user more than 100 keys; the cap then holds at exactly 100', async () => {
    const hoarder = await createUser(app, { email: 'hoarder@example.com' });
    const headers = bearer(await accessTokenOf(app, hoarder));
    const create = (name: string) => app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { name } });
    const answers = await Promise.all(Array.from({ length: 110 }, (_, index) => create(`key ${index}`)));
    // Each creation waits for the one before (the user's row is locked): on PostgreSQL with a pool of 10, some of a
    // burst this size wait longer than a transaction may (2 s) and are told to retry (503); none is a 500.
    const statuses = answers.map((answer) => answer.statusCode);
    expect(statuses.every((status) => status === 201 || status === 409 || status === 503)).toBe(true);
    const created = statuses.filter((status) => status === 201).length;
    expect(created).toBeLessThanOrEqual(100);
    expect(await app.db.prisma.apiKey.count({ where: { userId: hoarder.id } })).toBe(created);
    for (const answer of answers.filter((answer) => answer.statusCode === 409)) {
      expect(answer.json()).toEqual({ code: 40900, message: expect.stringContaining('100 API keys') });
    }
    // topped up one at a time: the 101st is refused
    for (let index = created; index < 100; index += 1) expect((await create(`top-up ${index}`)).statusCode).toBe(201);
    expect((await create('one too many')).json()).toEqual({ code: 40900, message: expect.stringContaining('100 API keys') });
    expect(await app.db.prisma.apiKey.count({ where: { userId: hoarder.id } })).toBe(100);
    const listed = await list(headers);
    expect((listed.json() as { data: { items: unknown[]; total: number } }).data).toMatchObject({ total: 100, items: expect.any(Array) });
    // revoking one makes room for one
    const [first] = (listed.json() as { data: { items: { id: number }[] } }).data.items;
    expect((await remove(first!.id, headers)).statusCode).toBe(204);
    expect((await app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { name: 'again' } })).statusCode).toBe(201);
  });
});

describe('authenticating with ?api_key=', () => {
  it('acts as the key owner on a protected route', async () => {
    const created = await createKey(bob, 'bob reads');
    const response = await withKey(created.key);
    expect(response.statusCode).toBe(200);
    const items = response.json().data.items as { id: number }[];
    expect(items.map((item) => item.id)).toContain(created.id);
    expect(await app.db.prisma.apiKey.count({ where: { id: { in: items.map((item) => item.id) }, userId: { not: bob.id } } })).toBe(0);

    // A key is never a recent login (SPEC §3.2): it cannot mint another key.
    const viaKey = await app.inject({ method: 'POST', url: `/api/v1/api-keys?api_key=${created.key}`, payload: { name: 'made with a key' } });
    expect(viaKey.statusCode).toBe(403);
    expect(viaKey.json()).toMatchObject({ code: 40301 });
    expect(await app.db.prisma.apiKey.count({ where: { userId: bob.id, name: 'made with a key' } })).toBe(0);
  });

  it.each([
    ['a malformed', 'not-a-key'],
    ['an empty', ''],
    ['a well-formed but unknown', `upk_${'0'.repeat(12)}_${'A'.repeat(43)}`],
  ])('refuses %s key with 401, on protected and public routes alike', async (_case, key) => {
    expectUnauthenticated(await withKey(key));
    expectUnauthenticated(await withKey(key, '/api/v1/users'));
  });

  it('refuses a key whose secret part was changed', async () => {
    const created = await createKey(bob, 'tampered');
    const last = created.key.at(-1) === 'A' ? 'B' : 'A';
    expectUnauthenticated(await withKey(`${created.key.slice(0, -1)}${last}`));
  });
});

describe('GET /api/v1/api-keys', () => {
  it("lists only the caller's keys, newest first, never with the key", async () => {
    const first = await createKey(root, 'root one');
    const second = await createKey(root, 'root two');
    await createKey(alice, 'alice other');
    const response = await list(as(root));
    expect(response.statusCode).toBe(200);
    const { data } = response.json();
    expect(data).toEqual({ items: [expect.objectContaining({ id: second.id }), expect.objectContaining({ id: first.id })], total: 2 });
    for (const item of data.items) expect(Object.keys(item).sort()).toEqual(['createdAt', 'id', 'name', 'prefix']);
  });

  it('refuses an anonymous caller with 401', async () => {
    expectUnauthenticated(await list({}));
  });
});

describe('DELETE /api/v1/api-keys/{id}', () => {
  it('revokes the key: 204, then the key is refused with 401; deleting again is 204 too', async () => {
    const created = await createKey(alice, 'to revoke');
    expect((await withKey(created.key)).statusCode).toBe(200);
    const response = await remove(created.id, as(alice));
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    expect(await keyRow(created.id)).toBeNull();
    expectUnauthenticated(await withKey(created.key));
    expect((await remove(created.id, as(alice))).statusCode).toBe(204);
    expect((await remove(987654, as(alice))).statusCode).toBe(204);
  });

  it('a key may revoke itself', async () => {
    const created = await createKey(alice, 'self revoking');
    expect((await app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${created.id}?api_key=${created.key}` })).statusCode).toBe(204);
    expectUnauthenticated(await withKey(created.key));
  });

  it("refuses someone else's key with 403 and leaves it working", async () => {
    const created = await createKey(alice, 'not bob’s');
    expectForbidden(await remove(created.id, as(bob)));
    expect(await keyRow(created.id)).not.toBeNull();
    expect((await withKey(created.key)).statusCode).toBe(200);
  });

  it("lets an ADMIN revoke anyone's key", async () => {
    const created = await createKey(bob, 'revoked by root');
    expect((await remove(created.id, as(root))).statusCode).toBe(204);
    expect(await keyRow(created.id)).toBeNull();
    expectUnauthenticated(await withKey(created.key));
  });

  it('a key used while it is being revoked is either accepted or refused with 401, never another error', async () => {
    for (let round = 0; round < 20; round++) {
      const created = await createKey(alice, `race ${round}`);
      const [use, revoke] = await Promise.all([withKey(created.key, '/api/v1/users'), remove(created.id, as(alice))]);
      expect(revoke.statusCode).toBe(204);
      expect([200, 401]).toContain(use.statusCode);
      if (use.statusCode === 401) expectUnauthenticated(use);
      expectUnauthenticated(await withKey(created.key));
    }
  });

  it('refuses an anonymous caller with 401, deleting nothing', async () => {
    const created = await createKey(alice, 'anonymous cannot delete');
    expectUnauthenticated(await remove(created.id, {}));
    expect(await keyRow(created.id)).not.toBeNull();
  });

  it('answers 400 naming `id` for a non-numeric id', async () => {
    const response = await remove(Number.NaN, as(alice));
    expect(response.statusCode).toBe(400);
    expect(response.json().errors).toEqual([expect.objectContaining({ field: 'id' })]);
  });
});

describe('logs', () => {
  it('were written at info level, and never contain a key', async () => {
    expect(createdKeys.length).toBeGreaterThan(5);
    expect(logLines.length).toBeGreaterThan(20);
    expect(logLines.some((line) => line.includes('/api/v1/api-keys'))).toBe(true);
    const logs = logLines.join('');
    for (const key of createdKeys) {
      expect(logs).not.toContain(key);
      expect(logs).not.toContain(encodeURIComponent(key));
      expect(logs).not.toContain(key.slice(-43));
    }
    expect(logs).not.toContain('not-a-key');
  });
});
