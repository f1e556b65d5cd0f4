// Domain events across instances: Yoga's pub/sub over Redis PUBLISH/SUBSCRIBE (@graphql-yoga/redis-event-target).
//
// Every instance publishes to Redis and hears its own events back through its subscription, so a subscriber gets
// each event exactly once whichever instance created the post. Payloads cross Redis as JSON; the post's Date
// fields are revived on the way in so resolvers see the same Post as in one process.
//
// The library calls `publish`/`subscribe` without handling their promises; the two thin facades below catch
// their failures (Redis down), log them, and keep the process alive: the post is stored, only its event is lost.
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import type { FastifyBaseLogger } from 'fastify';
import { createPubSub, type PubSubEvent } from 'graphql-yoga';
import type { Redis } from 'ioredis';
import { REDIS_NAMESPACE, type RedisConnection } from '../redis-connection.js';
import type { DomainEvents, EventBus } from './bus.js';
import { asEventBus } from './memory.js';

const DATE_FIELDS = new Set(['createdAt', 'updatedAt']);
const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

export const eventSerializer = {
  stringify: (value: unknown) => JSON.stringify(value),
  parse: (text: string): unknown =>
    JSON.parse(text, (key, value: unknown) => (DATE_FIELDS.has(key) && typeof value === 'string' && ISO_DATE.test(value) ? new Date(value) : value)),
};

type MessageListener = (channel: string, message: string) => void;

export function createRedisEventBus(redis: RedisConnection, log: FastifyBaseLogger): EventBus {
  const channel = (topic: string) => `${REDIS_NAMESPACE}events:${topic}`;
  const topicOf = (name: string) => (name.startsWith(`${REDIS_NAMESPACE}events:`) ? name.slice(`${REDIS_NAMESPACE}events:`.length) : undefined);

  // Only the members createRedisEventTarget uses (publish; on('message'), subscribe, unsubscribe), checked
  // against @graphql-yoga/redis-event-target 3.0.x.
  const publishClient = {
    publish: (topic: string, message: string) =>
      redis.commands.publish(channel(topic), message).catch((error: unknown) => {
        log.error({ err: error, topic }, 'event not published: Redis unreachable (the write itself succeeded)');
        return 0;
      }),
  };
  const subscribeClient = {
    on: (event: 'message', listener: MessageListener) => {
      redis.subscriber.on(event, (name: string, message: string) => {
        const topic = topicOf(name);
        if (topic !== undefined) listener(topic, message);
      });
      return subscribeClient;
    },
    subscribe: (topic: string) =>
      redis.subscriber.subscribe(channel(topic)).catch((error: unknown) => log.error({ err: error, topic }, 'Redis SUBSCRIBE failed')),
    unsubscribe: (topic: string) =>
      redis.subscriber.unsubscribe(channel(topic)).catch((error: unknown) => log.warn({ err: error, topic }, 'Redis UNSUBSCRIBE failed')),
  };

  const eventTarget = createRedisEventTarget<PubSubEvent<DomainEvents, keyof DomainEvents>>({
    publishClient: publishClient as unknown as Redis,
    subscribeClient: subscribeClient as unknown as Redis,
    serializer: eventSerializer,
  });
  return asEventBus(createPubSub<DomainEvents>({ eventTarget }));
}
