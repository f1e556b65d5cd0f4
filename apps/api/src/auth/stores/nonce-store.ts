// Seen signed-request nonces (replay protection): in memory now, Redis behind the same interface later.

export interface NonceStore {
  /** Records `nonce`; false when it was already seen within its lifetime (a replay). */
  claim(nonce: string, ttlMs: number, nowMs: number): Promise<boolean>;
}

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
