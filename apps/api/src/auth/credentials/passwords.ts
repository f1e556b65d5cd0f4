// Password hashing with argon2id (@node-rs/argon2); the only place passwords are hashed or verified.
import { hash, verify } from '@node-rs/argon2';

/** argon2id is @node-rs/argon2's default algorithm (its `Algorithm` const enum cannot be imported under isolatedModules). */
export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

export function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  return verify(passwordHash, password);
}

/**
 * Hashes done for one request that hashes many (an ADMIN's batch of up to 100 users) run at most this many at a time,
 * so the rest of libuv's thread pool (4 threads by default, where @node-rs/argon2 works) stays free for logins: a batch
 * of 100 hashed all at once queued every login behind it for 3.6 s (issue 31, item 8). One lane per call.
 */
export const BULK_HASHING_LANES = 2;

/** `items` mapped by `work` at most BULK_HASHING_LANES at a time, in order. By hand: eight lines, no dependency. */
export async function inLanes<T, R>(items: readonly T[], work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    for (let index = next++; index < items.length; index = next++) results[index] = await work(items[index]!, index);
  };
  await Promise.all(Array.from({ length: Math.min(BULK_HASHING_LANES, items.length) }, lane));
  return results;
}
