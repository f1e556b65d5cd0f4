// Idempotency-Key records in the database (the idempotency_records table, through Prisma): every instance sees them.
import type { Prisma, PrismaClient } from '@users-posts/db';
import { DEFAULT_STORE_BOUNDS } from '../../config/store-bounds.js';
import type { ClaimedKey, IdempotencyRecord, IdempotencyStore, KeptAnswer } from './store.js';

const isUniqueViolation = (error: unknown) => (error as { code?: unknown }).code === 'P2002';

export class DatabaseIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly prisma: PrismaClient,
    /** IDEMPOTENCY_KEYS_MAX_PER_CLIENT: a client's records beyond it, oldest first, are forgotten (SPEC §0.2). */
    private readonly maxPerScope: number = DEFAULT_STORE_BOUNDS.idempotencyKeysPerClient,
  ) {}

  async create(claimed: ClaimedKey, record: { fingerprint: string; lockedUntil: number; expiresAt: number }): Promise<boolean> {
    try {
      await this.prisma.idempotencyRecord.create({
        data: { ...claimed, fingerprint: record.fingerprint, lockedUntil: new Date(record.lockedUntil), expiresAt: new Date(record.expiresAt) },
      });
      // A client with more keys than its share forgets its oldest: a retry comes within minutes, not after that many writes.
      await this.prisma.$executeRaw`
        DELETE FROM idempotency_records WHERE scope = ${claimed.scope} AND key IN (
          SELECT key FROM idempotency_records WHERE scope = ${claimed.scope} ORDER BY created_at DESC, key DESC OFFSET ${this.maxPerScope})`;
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  async find(scope: string, key: string): Promise<IdempotencyRecord | undefined> {
    const row = await this.prisma.idempotencyRecord.findUnique({ where: { scope_key: { scope, key } } });
    if (!row) return undefined;
    return {
      claim: row.claim,
      fingerprint: row.fingerprint,
      lockedUntil: row.lockedUntil.getTime(),
      expiresAt: row.expiresAt.getTime(),
      answer: row.status === null ? undefined : { status: row.status, headers: (row.headers ?? {}) as Record<string, string>, body: row.body },
    };
  }

  async takeOver(current: ClaimedKey, next: { claim: string; lockedUntil: number }): Promise<boolean> {
    const { count } = await this.prisma.idempotencyRecord.updateMany({
      where: { ...current, status: null },
      data: { claim: next.claim, lockedUntil: new Date(next.lockedUntil) },
    });
    return count === 1;
  }

  async keep(claimed: ClaimedKey, answer: KeptAnswer): Promise<void> {
    await this.prisma.idempotencyRecord.updateMany({
      where: { ...claimed },
      data: { status: answer.status, headers: answer.headers as Prisma.InputJsonObject, body: answer.body },
    });
  }

  async drop(claimed: ClaimedKey): Promise<void> {
    await this.prisma.idempotencyRecord.deleteMany({ where: { ...claimed } });
  }

  async purgeExpired(now: number): Promise<void> {
    await this.prisma.idempotencyRecord.deleteMany({ where: { expiresAt: { lte: new Date(now) } } });
  }
}
