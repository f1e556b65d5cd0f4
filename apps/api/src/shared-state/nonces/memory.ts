// Seen nonces in this process's memory (one instance), expired entries swept as new ones come.
import type { NonceStore } from './store.js';

export class MemoryNonceStore implements NonceStore {
  private readonly seen = new Map<string, number>();

  async claim(nonce: string, ttlMs: number, nowMs: number): Promise<boolean> {
    this.sweep(nowMs);
    const expiresAt = this.seen.get(nonce);
    if (expiresAt !== undefined && expiresAt > nowMs) return false;
    this.seen.set(nonce, nowMs + ttlMs);
    return true;
  }

  /** Map iteration is in insertion order and every entry lives equally long: stop at the first live one. */
  private sweep(nowMs: number): void {
    for (const [nonce, expiresAt] of this.seen) {
      if (expiresAt > nowMs) break;
      this.seen.delete(nonce);
    }
  }
}
