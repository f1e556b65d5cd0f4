// The access-token blocklist in Redis (REDIS_URL), shared by every instance: one key per revoked jti, expiring with the token.
import type { Redis } from 'ioredis';
import { sharedStateUnavailable } from '../../errors/unavailable.js';
import type { RevocationStore } from './store.js';

const key = (jti: string) => `revoked-jti:${jti}`;

/**
 * Fails closed: when Redis cannot answer, `isRevoked` throws UNAVAILABLE (503) rather than letting a possibly
 * revoked token through, and `revoke` throws so a logout is never reported done when it is not.
 */
export class RedisRevocationStore implements RevocationStore {
  constructor(private readonly redis: Redis) {}

  async revoke(jti: string, expiresAtMs: number): Promise<void> {
    // Expiry is absolute (PXAT) so every instance agrees on it; a token already expired needs no entry.
    if (expiresAtMs <= Date.now()) return;
    try {
      await this.redis.set(key(jti), '1', 'PXAT', expiresAtMs);
    } catch (error) {
      throw sharedStateUnavailable('the logout could not be recorded', error);
    }
  }

  async isRevoked(jti: string): Promise<boolean> {
    try {
      return (await this.redis.exists(key(jti))) === 1;
    } catch (error) {
      throw sharedStateUnavailable('the access token cannot be checked against the logout blocklist', error);
    }
  }
}
