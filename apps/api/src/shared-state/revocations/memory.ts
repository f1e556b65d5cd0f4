// The blocklist in this process's memory (one instance).
import type { RevocationStore } from './store.js';

/** One process only: entries are dropped lazily once expired. */
export class MemoryRevocationStore implements RevocationStore {
  private readonly entries = new Map<string, number>();

  async revoke(jti: string, expiresAtMs: number): Promise<void> {
    this.entries.set(jti, expiresAtMs);
  }

  async isRevoked(jti: string, nowMs: number): Promise<boolean> {
    const expiresAt = this.entries.get(jti);
    if (expiresAt === undefined) return false;
    if (expiresAt <= nowMs) {
      this.entries.delete(jti);
      return false;
    }
    return true;
  }
}
