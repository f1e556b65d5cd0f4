// Privilege escalation past the outer guards: the admin-only user operations refuse a USER principal in the domain
// services themselves (not only through x-required-role and @auth), and through both doors nothing changes.
import { describe, expect, it } from '@jest/globals';
import type { Principal } from '../../src/auth/principal.js';
import { AppError } from '../../src/errors/app-error.js';
import { type Account } from '../support/accounts.js';
import { useTestApp } from '../support/app.js';

const suite = useTestApp();

const userPrincipal = (account: Account): Principal => ({ kind: 'user', userId: account.id, role: 'USER', via: 'bearer', recentLogin: true });
const anonymous: Principal = { kind: 'anonymous' };
const usersTable = async () => suite.app.db.prisma.user.findMany({ orderBy: { id: 'asc' } });

async function expectRefused(run: () => Promise<unknown>, code: 'FORBIDDEN' | 'UNAUTHENTICATED') {
  const before = await usersTable();
  await expect(run()).rejects.toThrow(AppError);
  await expect(run()).rejects.toMatchObject({ kind: { graphqlCode: code } });
  expect(await usersTable()).toEqual(before);
}

describe('a USER principal calling admin-only user services directly', () => {
  it.each([
    ['delete', (p: Principal) => suite.app.services.users.delete(p, suite.bob.id)],
    ['deleteMany', (p: Principal) => suite.app.services.users.deleteMany(p, [suite.bob.id, suite.admin.id])],
    ['createMany', (p: Principal) => suite.app.services.users.createMany(p, [{ name: 'Sock', email: 'sock@example.com' }])],
    ['updateMany', (p: Principal) => suite.app.services.users.updateMany(p, [suite.bob.id], { role: 'ADMIN' })],
  ])('%s → FORBIDDEN (USER) / UNAUTHENTICATED (nobody), and nothing changes', async (_name, call) => {
    await expectRefused(() => call(userPrincipal(suite.alice)), 'FORBIDDEN');
    await expectRefused(() => call(anonymous), 'UNAUTHENTICATED');
  });

  it('a USER deleting itself through the service is refused too (deletion is an ADMIN decision)', async () => {
    await expectRefused(() => suite.app.services.users.delete(userPrincipal(suite.alice), suite.alice.id), 'FORBIDDEN');
  });

  it('an ADMIN principal passes the service rule (the rule refuses by role, not by the call)', async () => {
    const created = await suite.app.services.users.createMany({ kind: 'service', role: 'ADMIN', via: 'signature' }, [
      { name: 'Temp', email: 'temp-admin-made@example.com' },
    ]);
    expect(created).toHaveLength(1);
    expect(await suite.app.services.users.delete({ kind: 'service', role: 'ADMIN', via: 'signature' }, created[0]!.id)).toBe(true);
  });
});

describe('the same through both doors with a USER token', () => {
  it('REST: DELETE one, DELETE many, POST batch → 403, nothing changes', async () => {
    const before = await usersTable();
    const attempts = [
      suite.app.inject({ method: 'DELETE', url: `/api/v1/users/${suite.bob.id}`, headers: suite.alice.headers }),
      suite.app.inject({ method: 'DELETE', url: `/api/v1/users?ids=${suite.bob.id},${suite.admin.id}`, headers: suite.alice.headers }),
      suite.app.inject({
        method: 'POST',
        url: '/api/v1/users/batch',
        headers: suite.alice.headers,
        payload: { users: [{ name: 'Sock', email: 'sock2@example.com' }] },
      }),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.statusCode).toBe(403);
      expect(response.json()).toMatchObject({ code: 40300 });
    }
    expect(await usersTable()).toEqual(before);
  });

  it('GraphQL: deleteUser (also aliased and batched) → FORBIDDEN, nothing changes', async () => {
    const before = await usersTable();
    const response = await suite.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: suite.alice.headers,
      payload: [
        { query: `mutation { a: deleteUser(id: "${suite.bob.id}") b: deleteUser(id: "${suite.admin.id}") }` },
        { query: `mutation { deleteUser(id: "${suite.alice.id}") }` },
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
