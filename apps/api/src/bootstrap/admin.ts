// Creates or updates the administrator named by ADMIN_EMAIL / ADMIN_PASSWORD at start.
import type { PrismaClient } from '@users-posts/db';
import { hashPassword } from '../auth/credentials/passwords.js';

/**
 * Anyone may have signed up with the ADMIN_EMAIL address before it was configured (nothing verifies sign-up
 * addresses). Promoting that account must not promote what its creator holds: every credential of it — API keys,
 * sessions, refresh tokens, OpenID links, and access tokens (tokenVersion) — ends, and only ADMIN_PASSWORD logs in.
 */
export async function ensureAdmin(prisma: PrismaClient, admin: { email: string; password: string }): Promise<number> {
  const email = admin.email.toLowerCase();
  const passwordHash = await hashPassword(admin.password);
  return prisma.$transaction(async (tx) => {
    const existing = await tx.user.findUnique({ where: { email } });
    if (existing && existing.role !== 'ADMIN') {
      const userId = existing.id;
      await tx.apiKey.deleteMany({ where: { userId } });
      await tx.session.deleteMany({ where: { userId } });
      await tx.refreshToken.updateMany({ where: { userId, revokedAt: null }, data: { revokedAt: new Date() } });
      await tx.oAuthAccount.deleteMany({ where: { userId } });
      await tx.user.update({ where: { id: userId }, data: { tokenVersion: { increment: 1 } } });
    }
    const user = await tx.user.upsert({
      where: { email },
      create: { email, name: 'Administrator', role: 'ADMIN', passwordHash },
      update: { role: 'ADMIN', passwordHash },
    });
    return user.id;
  });
}
