// Creates or updates the administrator named by ADMIN_EMAIL / ADMIN_PASSWORD at start.
import type { PrismaClient } from '@users-posts/db';
import { hashPassword } from '../auth/credentials/passwords.js';
import { weakPasswordReason } from '../auth/password-policy.js';
import { AppError } from '../errors/app-error.js';
import { validateInput } from '../services/validation.js';

const ADMIN_NAME = 'Administrator';

/** The environment variable each field of the administrator comes from, to name it in the start's one line. */
const VARIABLES: Record<string, string> = { email: 'ADMIN_EMAIL', password: 'ADMIN_PASSWORD' };

/**
 * Refuses settings the API would refuse for any account (SPEC §0.1): the contract's CreateUserInput as sign-up checks it
 * (services/validation.ts: the e-mail's one rule, the password's length) and the whole password policy, common passwords
 * included (auth/password-policy.ts). Throws one error whose message is the start's one line (startup-failure.ts), naming
 * each variable at fault and never echoing the password.
 */
export function assertAdminSettings(admin: { email: string; password: string }): void {
  const problems: string[] = [];
  try {
    validateInput('CreateUserInput', { name: ADMIN_NAME, email: admin.email, password: admin.password });
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    for (const field of error.fields ?? []) problems.push(`${VARIABLES[field.field] ?? field.field} ${field.message}`);
  }
  const weak = weakPasswordReason(admin.password, admin.email);
  if (weak) problems.push(`ADMIN_PASSWORD ${weak}`);
  if (problems.length > 0) throw new Error(`the administrator of ADMIN_EMAIL / ADMIN_PASSWORD cannot be made: ${problems.join(', ')}`);
}

/**
 * Anyone may have signed up with the ADMIN_EMAIL address before it was configured (nothing verifies sign-up
 * addresses). Promoting that account must not promote what its creator holds: every credential of it — API keys,
 * sessions, refresh tokens, OpenID links, and access tokens (tokenVersion) — ends, and only ADMIN_PASSWORD logs in.
 * The settings are judged first (assertAdminSettings): a bad one fails the start and writes nothing.
 */
export async function ensureAdmin(prisma: PrismaClient, admin: { email: string; password: string }): Promise<number> {
  assertAdminSettings(admin);
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
      create: { email, name: ADMIN_NAME, role: 'ADMIN', passwordHash },
      update: { role: 'ADMIN', passwordHash },
    });
    return user.id;
  });
}
