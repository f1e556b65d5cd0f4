// Known logins in this process's memory (one instance), bounded by KNOWN_LOGIN_STORE_MAX (bounds/expiring-keys.ts).
import { ExpiringKeys } from '../../bounds/expiring-keys.js';
import { DEFAULT_STORE_BOUNDS } from '../../config/store-bounds.js';
import type { KnownLoginStore } from './store.js';

export class MemoryKnownLoginStore implements KnownLoginStore {
  readonly known: ExpiringKeys;

  constructor(max = DEFAULT_STORE_BOUNDS.knownLogins) {
    this.known = new ExpiringKeys(max);
  }

  /**
   * Keys are digests already (rate-limits/buckets.ts). A full store keeps no new pair: the login itself succeeded, and
   * only the exemption from the per-account guard is not remembered for it (no known pair is ever evicted for another).
   */
  async remember(key: string, ttlMs: number): Promise<void> {
    this.known.add(key, Date.now() + ttlMs, Date.now());
  }

  async has(key: string): Promise<boolean> {
    return this.known.has(key, Date.now());
  }
}
