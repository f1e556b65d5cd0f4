// API keys: `upk_<prefix>_<secret>`, shown once at creation, stored as a SHA-256 hash next to the visible prefix.
import type { ApiKey, PrismaClient } from '@users-posts/db';
import { randomBytes } from 'node:crypto';
import { AppError } from '../../errors/app-error.js';
import type { Clock } from '../clock.js';
import { randomSecret, sha256 } from '../hashing.js';

const KEY_PATTERN = /^upk_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/;
/** Keys one user may hold (the contract's `maxItems` on the list): a user scripting creations would otherwise grow
 * the table and the unpaged list without end. */
export const MAX_API_KEYS_PER_USER = 100;

export interface CreatedApiKey {
  record: ApiKey;
  /** The whole key: returned this once, never stored. */
  key: string;
}

export class ApiKeyService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    /** A key was deleted: its owner's open streams authorize again at once (auth/access-changes.ts), not at their next check. */
    private readonly revoked: (userId: number) => void = () => undefined,
  ) {}

  async create(userId: number, name: string): Promise<CreatedApiKey> {
    const prefix = `upk_${randomBytes(6).toString('hex')}`;
    const key = `${prefix}_${randomSecret(32)}`;
    const record = await this.prisma.$transaction(
      async (tx) => {
        // The user's row, locked, serialises the user's concurrent creations: each counts (READ COMMITTED: a fresh
        // snapshot per statement) the keys of the one before. No row: the user was deleted under the request.
        const owner = await tx.$queryRaw<unknown[]>`SELECT 1 FROM users WHERE id = ${userId} FOR UPDATE`;
        if (owner.length === 0) throw new AppError('UNAUTHENTICATED', 'This account no longer exists');
        const held = await tx.apiKey.count({ where: { userId } });
        if (held >= MAX_API_KEYS_PER_USER) {
          throw new AppError('CONFLICT', `At most ${MAX_API_KEYS_PER_USER} API keys per user: revoke one to create another`);
        }
        return tx.apiKey.create({ data: { userId, name, prefix, keyHash: sha256(key) } });
      },
      { isolationLevel: 'ReadCommitted' },
    );
    return { record, key };
  }

  list(userId: number): Promise<ApiKey[]> {
    return this.prisma.apiKey.findMany({ where: { userId }, orderBy: { id: 'desc' } });
  }

  /** Deletes a key of `ownerId` (any key for an ADMIN); true when one was deleted. */
  async delete(id: number, caller: { userId: number; admin: boolean }): Promise<boolean> {
    const key = await this.prisma.apiKey.findUnique({ where: { id } });
    if (!key) return false;
    if (key.userId !== caller.userId && !caller.admin) throw new AppError('FORBIDDEN', 'Not your API key');
    const { count } = await this.prisma.apiKey.deleteMany({ where: { id } });
    if (count === 1) this.revoked(key.userId);
    return count === 1;
  }

  /** The owner of a presented key, or null for a malformed, unknown or revoked (deleted) one. */
  async verify(key: string): Promise<{ userId: number } | null> {
    if (!KEY_PATTERN.test(key)) return null;
    const record = await this.prisma.apiKey.findUnique({ where: { keyHash: sha256(key) } });
    if (!record) return null;
    const { count } = await this.prisma.apiKey.updateMany({ where: { id: record.id }, data: { lastUsedAt: new Date(this.clock.now()) } });
    return count === 1 ? { userId: record.userId } : null;
  }
}
