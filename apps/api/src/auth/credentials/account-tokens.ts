// Tokens mailed for a password reset, an e-mail verification (SPEC §3.2) or an address's way past the login guard
// (§3.3): 128 random bits (22 characters, short enough for a link that fits one line of mail), stored as SHA-256 only,
// single use, expiring, and (but address-trust links) superseded by a newer token of the same purpose. Guessing one is
// hopeless, and rate limited besides (rest/route-options.ts).
import type { AccountTokenPurpose, PrismaClient } from '@users-posts/db';
import type { Clock } from '../clock.js';
import { randomSecret, sha256 } from '../hashing.js';

export const ACCOUNT_TOKEN_TTL_MS: Record<AccountTokenPurpose, number> = {
  password_reset: 30 * 60 * 1000,
  email_verification: 24 * 60 * 60 * 1000,
  // As long as auth/address-trust.ts's mail budget window: while it refuses a new link, the last one mailed still works.
  address_trust: 60 * 60 * 1000,
};

/**
 * Purposes whose new token leaves the earlier live ones working: an address-trust link only vouches for the address it
 * is followed from, and the attacker who sets one off must not void the one the owner is about to follow.
 */
const KEEPS_EARLIER: ReadonlySet<AccountTokenPurpose> = new Set(['address_trust']);

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

  /**
   * A new token for `userId`, mailed to `email`; every earlier token of the same purpose stops working (only the expired
   * ones are cleared for a purpose of KEEPS_EARLIER).
   */
  async issue(userId: number, purpose: AccountTokenPurpose, email: string): Promise<string> {
    const token = randomSecret(16);
    const now = this.clock.now();
    const expiresAt = new Date(now + ACCOUNT_TOKEN_TTL_MS[purpose]);
    const superseded = KEEPS_EARLIER.has(purpose) ? { expiresAt: { lte: new Date(now) } } : {};
    await this.prisma.$transaction([
      this.prisma.accountToken.deleteMany({ where: { userId, purpose, ...superseded } }),
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
