// The users domain without a door: sign-up's rules, who may change which account and its role, and that a refused
// change leaves the row as it was (a typed scenario on a real test database).
import { describe, expect, it } from '@jest/globals';
import { anonymous } from '../auth/principal.js';
import { ErrorKinds } from '../errors/app-error.js';
import { defineScenario, useScenario } from '../../test/support/scenario.js';
import { publicUserKeys } from '../../test/support/shapes.js';

/** The doors' sign-up pricing of one's own e-mail is theirs (rate-limits/); these tests change no e-mail of their own. */
const UNPRICED = { admitEmailChange: () => Promise.resolve() };

const scenario = useScenario(
  defineScenario({
    users: {
      ada: { name: 'Ada', email: 'ada@example.com', age: 36 },
      bob: { name: 'Bob', email: 'bob@example.com' },
      root: { name: 'Root', email: 'root@example.com', role: 'ADMIN' },
    },
  }),
);

const stored = (name: 'ada' | 'bob' | 'root') => scenario.db.prisma.user.findUniqueOrThrow({ where: { id: scenario.users[name].id } });

describe('UsersService.create (sign-up)', () => {
  it('stores the e-mail lower-cased, a USER, and the password only as a hash, which the answer does not hold', async () => {
    const user = await scenario.services.users.create({ name: 'Carol', email: 'Carol@Example.COM', password: 'carol-password' });
    expect(user).toMatchObject({ name: 'Carol', email: 'carol@example.com', role: 'USER' });
    expect(Object.keys(user).sort()).toEqual(publicUserKeys());
    const row = await scenario.db.prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(row.passwordHash).toMatch(/^\$argon2id\$/);
  });

  it('refuses an e-mail already used in another case as a conflict naming the field, and writes nothing', async () => {
    const before = await scenario.db.prisma.user.count();
    await expect(scenario.services.users.create({ name: 'Ada again', email: 'ADA@example.com' })).rejects.toMatchObject({
      kind: ErrorKinds.CONFLICT,
      fields: [{ field: 'email' }],
    });
    expect(await scenario.db.prisma.user.count()).toBe(before);
  });
});

describe('UsersService.update', () => {
  it('lets a user change their own account, and answers without credentials', async () => {
    const updated = await scenario.services.users.update(scenario.as('bob'), scenario.users.bob.id, { name: 'Robert' }, UNPRICED);
    expect(updated.name).toBe('Robert');
    expect(Object.keys(updated).sort()).toEqual(publicUserKeys());
  });

  it.each([
    ['a USER changing another account', () => scenario.as('bob'), ErrorKinds.FORBIDDEN, { name: 'Hacked' }],
    ['a USER giving themself a role', () => scenario.as('ada'), ErrorKinds.FORBIDDEN, { role: 'ADMIN' as const }],
    ['an anonymous caller', () => anonymous, ErrorKinds.UNAUTHENTICATED, { name: 'Hacked' }],
  ])('refuses %s, and the row is unchanged', async (_case, caller, kind, patch) => {
    const before = await stored('ada');
    await expect(scenario.services.users.update(caller(), scenario.users.ada.id, patch, UNPRICED)).rejects.toMatchObject({ kind });
    expect(await stored('ada')).toEqual(before);
  });

  it('lets an ADMIN change a role, and answers NOT_FOUND for an account that does not exist', async () => {
    expect((await scenario.services.users.update(scenario.as('root'), scenario.users.bob.id, { role: 'ADMIN' }, UNPRICED)).role).toBe('ADMIN');
    await expect(scenario.services.users.update(scenario.as('root'), 2_000_000_000, { name: 'Nobody' }, UNPRICED)).rejects.toMatchObject({
      kind: ErrorKinds.NOT_FOUND,
    });
  });
});
