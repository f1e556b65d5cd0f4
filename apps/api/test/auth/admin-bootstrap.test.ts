// ADMIN_EMAIL + ADMIN_PASSWORD create, then update, the administrator at start.
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
});
