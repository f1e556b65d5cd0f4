// ADMIN_EMAIL + ADMIN_PASSWORD create, then update, the administrator at start; settings the API would refuse for any
// account (the contract's e-mail rule, the whole password policy) fail the start and make nobody.
import { describe, expect, it } from '@jest/globals';
import { createTestDatabase } from '@users-posts/db/testing';
import { buildApp } from '../../src/app.js';
import { verifyPassword } from '../../src/auth/credentials/passwords.js';
import { testConfig } from '../support/config.js';

describe('administrator bootstrap', () => {
  it('creates the admin with an argon2id hash, and updates it on the next start', async () => {
    const database = await createTestDatabase();
    const first = await buildApp(testConfig({ admin: { email: 'Root@Example.com', password: 'first-password' } }), { database });
    // Ensured once the app is ready (the embedded database opens in its own thread until then), as listen() makes it.
    await first.ready();
    const created = await first.db.prisma.user.findUniqueOrThrow({ where: { email: 'root@example.com' } });
    expect(created.role).toBe('ADMIN');
    expect(created.passwordHash).toMatch(/^\$argon2id\$/);
    expect(await verifyPassword(created.passwordHash!, 'first-password')).toBe(true);

    // A user demoted by hand is promoted again, with the new password, and no second row appears.
    await first.db.prisma.user.update({ where: { id: created.id }, data: { role: 'USER' } });
    const reopened = await buildApp(testConfig({ admin: { email: 'root@example.com', password: 'second-password' } }), { database });
    await reopened.ready();
    const updated = await reopened.db.prisma.user.findUniqueOrThrow({ where: { id: created.id } });
    expect(updated.role).toBe('ADMIN');
    expect(await verifyPassword(updated.passwordHash!, 'second-password')).toBe(true);
    expect(await reopened.db.prisma.user.count()).toBe(1);
    await reopened.close(); // closes the shared database; `first` is dropped without a second close
  });

  it.each([
    [
      'a commonly used ADMIN_PASSWORD',
      { email: 'root@example.com', password: 'iloveyou1' },
      /^the administrator .*: ADMIN_PASSWORD is a commonly used password/,
    ],
    [
      'an ADMIN_PASSWORD that is the address',
      { email: 'operator@example.com', password: 'operator@example.com' },
      /ADMIN_PASSWORD must not be the e-mail address/,
    ],
    ['a short ADMIN_PASSWORD', { email: 'root@example.com', password: 'short' }, /ADMIN_PASSWORD must NOT have fewer than 8 characters/],
    [
      'an ADMIN_EMAIL without a dot in its domain',
      { email: 'root@localhost', password: 'a fine operator passphrase' },
      /ADMIN_EMAIL must match format "email"/,
    ],
    [
      'an ADMIN_EMAIL with a Cyrillic о',
      { email: 'rооt@example.com', password: 'a fine operator passphrase' },
      /ADMIN_EMAIL must match format "email"/,
    ],
    [
      'both at once, each named',
      { email: 'x<root@example.com>', password: 'qwertyuiop' },
      /ADMIN_EMAIL must match format "email", ADMIN_PASSWORD is a commonly used/,
    ],
  ])('%s fails the start with one line naming it, and makes no administrator', async (_case, admin, message) => {
    const app = await buildApp(testConfig({ admin }), { database: await createTestDatabase() });
    const failure = await app.ready().then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toMatch(message);
    expect(failure?.message).not.toContain('\n');
    if (admin.password !== admin.email) expect(failure?.message).not.toContain(admin.password); // never echoed
    expect(await app.db.prisma.user.count()).toBe(0);
    await app.close();
  });
});
