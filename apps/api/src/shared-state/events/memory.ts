// The event bus of one process: Yoga's pub/sub on one EventTarget, each subscription a listener on it.
import { createPubSub, type PubSub, type PubSubEventTarget } from 'graphql-yoga';
import { setMaxListeners } from 'node:events';
import type { DomainEvents, EventBus } from './bus.js';

export function createMemoryEventBus(): EventBus {
  const eventTarget = new EventTarget();
  // Every open subscription adds a listener; Node's default warning at 11 is no leak here.
  setMaxListeners(0, eventTarget);
  return asEventBus(createPubSub<DomainEvents>({ eventTarget: eventTarget as PubSubEventTarget<DomainEvents> }));
}

/** Yoga's pub/sub (both backends use it) as the domain's port: the services never see Yoga's types. */
export function asEventBus(pubsub: PubSub<DomainEvents>): EventBus {
  return {
    publish: (name, ...payload) => pubsub.publish(name, ...payload),
    // Every domain event is a topic with one payload, no routing id: Yoga's overloads cannot see that for a generic name.
    subscribe: (name) => (pubsub.subscribe as (topic: string) => unknown)(name) as ReturnType<EventBus['subscribe']>,
  };
}
