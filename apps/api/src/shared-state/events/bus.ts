// The port of the domain's events (postCreated, accessChanged): what services publish and subscriptions read, whatever
// carries them (this process's memory, memory.ts; Redis across instances, redis.ts).
import type { Post } from '@users-posts/db';

export type DomainEvents = {
  postCreated: [post: Post];
  /**
   * What a user may do or see may have changed (a role changed, the user deleted, credentials revoked): open WebSockets
   * and SSE streams of that user, on every instance, authorize again at once (auth/access-changes.ts).
   */
  accessChanged: [userId: number];
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
