// Seen signed-request nonces in Redis (REDIS_URL): a replay is caught whichever instance saw the nonce first.
import type { Redis } from 'ioredis';
import { boundedKey } from '../../bounds/keys.js';
import { sharedStateUnavailable } from '../../errors/unavailable.js';
import type { NonceStore } from './store.js';

/** Fails closed: without Redis a replay cannot be ruled out, so the signed request gets 503, never a pass. */
export class RedisNonceStore implements NonceStore {
  constructor(private readonly redis: Redis) {}

  async claim(nonce: string, ttlMs: number): Promise<boolean> {
    try {
      // SET NX is atomic: of two instances claiming the same nonce at once, exactly one gets OK.
      return (await this.redis.set(`nonce:${boundedKey(nonce)}`, '1', 'PX', ttlMs, 'NX')) === 'OK';
    } catch (error) {
      throw sharedStateUnavailable('the request signature nonce cannot be checked', error);
    }
  }
}
