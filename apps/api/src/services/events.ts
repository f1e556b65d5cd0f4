// Domain events (postCreated) on one pub/sub: in memory now; the scale-out issue plugs Redis in behind it.
import type { Post } from '@users-posts/db';
import { createPubSub } from 'graphql-yoga';

export type DomainEvents = {
  postCreated: [post: Post];
};

export type EventBus = ReturnType<typeof createPubSub<DomainEvents>>;

export function createEventBus(): EventBus {
  return createPubSub<DomainEvents>();
}
