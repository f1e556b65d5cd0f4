// The blocklist in this process's memory (one instance), bounded by REVOCATION_STORE_MAX (bounds/expiring-keys.ts).
import { ExpiringKeys } from '../../bounds/expiring-keys.js';
import { DEFAULT_STORE_BOUNDS } from '../../config/store-bounds.js';
import { AppError } from '../../errors/app-error.js';
import type { RevocationStore } from './store.js';

/** One process only: an entry lives until its token expires. A full blocklist refuses the logout (503) rather than forget a revocation. */
export class MemoryRevocationStore implements RevocationStore {
  readonly entries: ExpiringKeys;

  constructor(max = DEFAULT_STORE_BOUNDS.revocations) {
    this.entries = new ExpiringKeys(max);
  }

  async revoke(jti: string, expiresAtMs: number): Promise<void> {
    if (!this.entries.add(jti, expiresAtMs, Date.now()))
      throw new AppError('STORE_FULL', 'The server holds as many revoked tokens as it may (REVOCATION_STORE_MAX): retry in a few minutes');
  }

  async isRevoked(jti: string, nowMs: number): Promise<boolean> {
    return this.entries.has(jti, nowMs);
  }
}
