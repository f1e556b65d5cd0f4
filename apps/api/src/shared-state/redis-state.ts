// The shared state in Redis (REDIS_URL): the connection and every store and bus on it, in one module that the
// shared-state plugin imports only when Redis is configured, so a single instance never loads ioredis (~25 ms of start).
import type { FastifyBaseLogger } from 'fastify';
import { createRedisEventBus } from './events/redis.js';
import { RedisKnownLoginStore } from './known-logins/redis.js';
import { RedisNonceStore } from './nonces/redis.js';
import { openRedis } from './redis-connection.js';
import { RedisRevocationStore } from './revocations/redis.js';

export async function openRedisState(url: string, log: FastifyBaseLogger) {
  const redis = await openRedis(url, log);
  return {
    redis,
    stores: {
      revocations: new RedisRevocationStore(redis.commands),
      nonces: new RedisNonceStore(redis.commands),
      knownLogins: new RedisKnownLoginStore(redis.commands),
    },
    events: createRedisEventBus(redis, log),
  };
}
