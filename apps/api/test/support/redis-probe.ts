// Looks into the test Redis from outside the product: how many instances listen on the postCreated channel.
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { REDIS_NAMESPACE } from '../../src/shared-state/redis-connection.js';

export const POST_CREATED_CHANNEL = `${REDIS_NAMESPACE}events:postCreated`;

/** Resolves once `count` Redis connections (one per instance with subscribers) listen on postCreated. */
export async function untilChannelSubscribers(redisUrl: string, count: number, ms = 10_000): Promise<void> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0 });
  await redis.connect();
  try {
    const deadline = Date.now() + ms;
    for (;;) {
      const [, listening] = (await redis.pubsub('NUMSUB', POST_CREATED_CHANNEL)) as [string, number];
      if (Number(listening) === count) return;
      if (Date.now() > deadline) throw new Error(`${count} instance(s) listening on ${POST_CREATED_CHANNEL}: have ${listening} after ${ms} ms`);
      await sleep(50);
    }
  } finally {
    redis.disconnect();
  }
}
