// Seen nonces in this process's memory (one instance), bounded by NONCE_STORE_MAX (bounds/expiring-keys.ts).
import { boundedKey } from '../../bounds/keys.js';
import { ExpiringKeys } from '../../bounds/expiring-keys.js';
import { DEFAULT_STORE_BOUNDS } from '../../config/store-bounds.js';
import { AppError } from '../../errors/app-error.js';
import type { NonceStore } from './store.js';

export class MemoryNonceStore implements NonceStore {
  readonly seen: ExpiringKeys;

  constructor(max = DEFAULT_STORE_BOUNDS.nonces) {
    this.seen = new ExpiringKeys(max);
  }

  /** A nonce is kept as its bounded key; a full store refuses the request (503) rather than forget a nonce and allow its replay. */
  async claim(nonce: string, ttlMs: number, nowMs: number): Promise<boolean> {
    const key = boundedKey(nonce);
    if (this.seen.has(key, nowMs)) return false;
    if (!this.seen.add(key, nowMs + ttlMs, nowMs))
      throw new AppError('STORE_FULL', 'The server holds as many signed-request nonces as it may (NONCE_STORE_MAX): retry in a few minutes');
    return true;
  }
}
