// The port of the domain's events (postCreated): what services publish and subscriptions read, whatever carries them
// (this process's memory, memory.ts; Redis across instances, redis.ts).
import type { Post } from '@users-posts/db';

export type DomainEvents = {
  postCreated: [post: Post];
};

/** The events of one subscription, in order; `return()` ends it (the subscriber's listener is removed). */
export interface EventStream<T> extends AsyncIterableIterator<T> {
  next(): Promise<IteratorResult<T>>;
  return(value?: unknown): Promise<IteratorResult<T>>;
}

export interface EventBus {
  /** Delivers the event to every subscriber (on every instance, with Redis). */
  publish<K extends keyof DomainEvents>(name: K, ...payload: DomainEvents[K]): void;
  /** The events of `name` from now on, until the iteration is ended. */
  subscribe<K extends keyof DomainEvents>(name: K): EventStream<DomainEvents[K][0]>;
}
