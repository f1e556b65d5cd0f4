// Domain events (postCreated) on one pub/sub: in this process's memory, or over Redis (shared-state/redis-event-bus.ts).
import type { Post } from '@users-posts/db';
import { createPubSub, type PubSubEventTarget } from 'graphql-yoga';
import { setMaxListeners } from 'node:events';

export type DomainEvents = {
  postCreated: [post: Post];
};

export type EventBus = ReturnType<typeof createPubSub<DomainEvents>>;

/** In this process's memory: one EventTarget, each subscription a listener on it. */
export function createEventBus(): EventBus {
  const eventTarget = new EventTarget();
  // Every open subscription adds a listener; Node's default warning at 11 is no leak here.
  setMaxListeners(0, eventTarget);
  return createPubSub<DomainEvents>({ eventTarget: eventTarget as PubSubEventTarget<DomainEvents> });
}
