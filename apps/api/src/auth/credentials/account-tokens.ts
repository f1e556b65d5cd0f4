// Tokens mailed for a password reset or an e-mail verification (SPEC §3.2): 128 random bits (22 characters, short
// enough for a link that fits one line of mail), stored as SHA-256 only, single use, expiring, and superseded by a
// newer token of the same purpose. Guessing one is hopeless, and rate limited besides (rest/route-options.ts).
import type { AccountTokenPurpose, PrismaClient } from '@users-posts/db';
import type { Clock } from '../clock.js';
import { randomSecret, sha256 } from '../hashing.js';

const TTL_MS: Record<AccountTokenPurpose, number> = {
  password_reset: 30 * 60 * 1000,
  email_verification: 24 * 60 * 60 * 1000,
};

export interface AccountTokenRecord {
  id: number;
  userId: number;
  /** The address the token was mailed to. */
  email: string;
}

export class AccountTokenService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
  ) {}

  /** A new token for `userId`, mailed to `email`; every earlier token of the same purpose stops working. */
  async issue(userId: number, purpose: AccountTokenPurpose, email: string): Promise<string> {
    const token = randomSecret(16);
    const expiresAt = new Date(this.clock.now() + TTL_MS[purpose]);
    await this.prisma.$transaction([
      this.prisma.accountToken.deleteMany({ where: { userId, purpose } }),
      this.prisma.accountToken.create({ data: { userId, purpose, email, tokenHash: sha256(token), expiresAt } }),
    ]);
    return token;
  }

  /** The live token of this value and purpose, or null (unknown, spent, superseded, expired, or another purpose). */
  async find(token: string, purpose: AccountTokenPurpose): Promise<AccountTokenRecord | null> {
    const record = await this.prisma.accountToken.findUnique({ where: { tokenHash: sha256(token) } });
    if (!record || record.purpose !== purpose || record.expiresAt.getTime() <= this.clock.now()) return null;
    return { id: record.id, userId: record.userId, email: record.email };
  }

  /** Every token of this purpose of the user stops working (a password change supersedes reset links). */
  async discard(userId: number, purpose: AccountTokenPurpose): Promise<void> {
    await this.prisma.accountToken.deleteMany({ where: { userId, purpose } });
  }
}
