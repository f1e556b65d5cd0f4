// Privilege escalation past the outer guards: the admin-only user operations refuse a USER principal in the domain
// services themselves (not only through x-required-role and @auth), and through both doors nothing changes.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import type { Principal } from '../../src/auth/principal.js';
import { AppError } from '../../src/errors/app-error.js';
import { createCast, type Account } from '../support/accounts.js';
import { createTestApp } from '../support/app.js';

let app: FastifyInstance;
let alice: Account;
let bob: Account;
let admin: Account;

beforeAll(async () => {
  app = await createTestApp();
  ({ alice, bob, admin } = await createCast(app));
});
afterAll(() => app.close());

const userPrincipal = (account: Account): Principal => ({ kind: 'user', userId: account.id, role: 'USER', via: 'bearer' });
const anonymous: Principal = { kind: 'anonymous' };
const usersTable = async () => app.db.prisma.user.findMany({ orderBy: { id: 'asc' } });

async function expectRefused(run: () => Promise<unknown>, code: 'FORBIDDEN' | 'UNAUTHENTICATED') {
  const before = await usersTable();
  await expect(run()).rejects.toThrow(AppError);
  await expect(run()).rejects.toMatchObject({ kind: { graphqlCode: code } });
  expect(await usersTable()).toEqual(before);
}

describe('a USER principal calling admin-only user services directly', () => {
  it.each([
    ['delete', (p: Principal) => app.services.users.delete(p, bob.id)],
    ['deleteMany', (p: Principal) => app.services.users.deleteMany(p, [bob.id, admin.id])],
    ['createMany', (p: Principal) => app.services.users.createMany(p, [{ name: 'Sock', email: 'sock@example.com' }])],
    ['updateMany', (p: Principal) => app.services.users.updateMany(p, [bob.id], { role: 'ADMIN' })],
  ])('%s → FORBIDDEN (USER) / UNAUTHENTICATED (nobody), and nothing changes', async (_name, call) => {
    await expectRefused(() => call(userPrincipal(alice)), 'FORBIDDEN');
    await expectRefused(() => call(anonymous), 'UNAUTHENTICATED');
  });

  it('a USER deleting itself through the service is refused too (deletion is an ADMIN decision)', async () => {
    await expectRefused(() => app.services.users.delete(userPrincipal(alice), alice.id), 'FORBIDDEN');
  });

  it('an ADMIN principal passes the service rule (the rule refuses by role, not by the call)', async () => {
    const created = await app.services.users.createMany({ kind: 'service', role: 'ADMIN', via: 'signature' }, [
      { name: 'Temp', email: 'temp-admin-made@example.com' },
    ]);
    expect(created).toHaveLength(1);
    expect(await app.services.users.delete({ kind: 'service', role: 'ADMIN', via: 'signature' }, created[0]!.id)).toBe(true);
  });
});

describe('the same through both doors with a USER token', () => {
  it('REST: DELETE one, DELETE many, POST batch → 403, nothing changes', async () => {
    const before = await usersTable();
    const attempts = [
      app.inject({ method: 'DELETE', url: `/api/v1/users/${bob.id}`, headers: alice.headers }),
      app.inject({ method: 'DELETE', url: `/api/v1/users?ids=${bob.id},${admin.id}`, headers: alice.headers }),
      app.inject({ method: 'POST', url: '/api/v1/users/batch', headers: alice.headers, payload: { users: [{ name: 'Sock', email: 'sock2@example.com' }] } }),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.statusCode).toBe(403);
      expect(response.json()).toMatchObject({ code: 40300 });
    }
    expect(await usersTable()).toEqual(before);
  });

  it('GraphQL: deleteUser (also aliased and batched) → FORBIDDEN, nothing changes', async () => {
    const before = await usersTable();
    const response = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: alice.headers,
      payload: [
        { query: `mutation { a: deleteUser(id: "${bob.id}") b: deleteUser(id: "${admin.id}") }` },
        { query: `mutation { deleteUser(id: "${alice.id}") }` },
      ],
    });
    const results = response.json() as { data: unknown; errors?: { extensions?: { code?: string } }[] }[];
    expect(results).toHaveLength(2);
    for (const result of results) {
      expect(result.errors?.length).toBeGreaterThan(0);
      for (const error of result.errors ?? []) expect(error.extensions?.code).toBe('FORBIDDEN');
    }
    expect(await usersTable()).toEqual(before);
  });
});
