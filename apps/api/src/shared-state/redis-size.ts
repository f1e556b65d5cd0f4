// How many keys one store holds in Redis, for its StoreDeclaration's size() (tests and operators; never on a request).
import type { Redis } from 'ioredis';
import { REDIS_NAMESPACE } from './redis-connection.js';

/** Keys under `prefix` (after the namespace), counted by SCAN up to `cap` (a bound is checked, not a census taken). */
export async function countRedisKeys(redis: Redis, prefix: string, cap: number): Promise<number> {
  let count = 0;
  // SCAN's MATCH is not prefixed by ioredis' keyPrefix: the namespace is written out.
  for await (const keys of redis.scanStream({ match: `${REDIS_NAMESPACE}${prefix}*`, count: 1000 })) {
    count += (keys as string[]).length;
    if (count >= cap) break;
  }
  return count;
}
