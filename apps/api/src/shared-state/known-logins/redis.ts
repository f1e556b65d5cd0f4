// Known logins in Redis (REDIS_URL): an address the owner logged in from through one instance is known to all.
import type { Redis } from 'ioredis';
import type { KnownLoginStore } from './store.js';

/** Without Redis nothing is known (the guard then applies to every address) and nothing is remembered. */
export class RedisKnownLoginStore implements KnownLoginStore {
  constructor(private readonly redis: Redis) {}

  async remember(key: string, ttlMs: number): Promise<void> {
    await this.redis.set(`known-login:${key}`, '1', 'PX', ttlMs).catch(() => undefined);
  }

  async has(key: string): Promise<boolean> {
    return (await this.redis.exists(`known-login:${key}`).catch(() => 0)) === 1;
  }
}
