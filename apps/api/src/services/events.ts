// Domain events (postCreated) on one pub/sub: in this process's memory, or over Redis (shared-state/redis-event-bus.ts).
import type { Post } from '@users-posts/db';
import { createPubSub } from 'graphql-yoga';

export type DomainEvents = {
  postCreated: [post: Post];
};

export type EventBus = ReturnType<typeof createPubSub<DomainEvents>>;

export function createEventBus(): EventBus {
  return createPubSub<DomainEvents>();
}
