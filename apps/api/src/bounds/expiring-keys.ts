// A set of keys that expire, with a bound on how many it holds (SPEC §0.2): the in-memory identity stores (nonces,
// revoked tokens, known logins) are made of it. At the bound it takes nothing more; the store decides what that means
// (a refusal, or a memory not kept), and never evicts a live key: each of them guards someone (a replay, a token).
export class ExpiringKeys {
  private readonly entries = new Map<string, number>(); // bound: `max` (each store's *_STORE_MAX)
  private lastFullSweep = 0;

  constructor(readonly max: number) {}

  get size(): number {
    return this.entries.size;
  }

  has(key: string, nowMs: number): boolean {
    return (this.entries.get(key) ?? 0) > nowMs;
  }

  /** Holds `key` until `expiresAtMs` (re-added keys move last); false when the store is full of live keys. */
  add(key: string, expiresAtMs: number, nowMs: number): boolean {
    this.sweep(nowMs);
    const present = this.entries.delete(key);
    if (!present && this.entries.size >= this.max && !this.sweepAll(nowMs)) return false;
    this.entries.set(key, expiresAtMs);
    return true;
  }

  /** Drops expired keys from the oldest insertion on, up to the first live one (stores whose keys all live alike are in expiry order). */
  private sweep(nowMs: number): void {
    for (const [key, expiresAt] of this.entries) {
      if (expiresAt > nowMs) break;
      this.entries.delete(key);
    }
  }

  /** At the bound: every expired key dropped, at most once a second (a full store is not scanned per request); true when room was made. */
  private sweepAll(nowMs: number): boolean {
    if (nowMs - this.lastFullSweep < 1_000) return false;
    this.lastFullSweep = nowMs;
    for (const [key, expiresAt] of this.entries) if (expiresAt <= nowMs) this.entries.delete(key);
    return this.entries.size < this.max;
  }
}
