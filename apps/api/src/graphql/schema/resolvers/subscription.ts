// Subscription root: postCreated streams every post created through either door, from the domain event bus.
import type { SubscriptionResolvers } from '../generated/resolvers.js';
import type { Post } from '@users-posts/db';
import type { Services } from '../../../services/index.js';
import type { GraphQLContext } from '../context.js';
import { createLoaders, type Loaders } from '../loaders.js';
import { deliveryTurn } from '../../guards/subscription-limits.js';

/**
 * DataLoaders per event, shared by every subscriber that receives it. A subscription's context lives as long as the
 * subscription, so its own loaders would serve the first event's rows to every later event (a renamed author would
 * keep the old name). The event bus hands every local subscriber the same payload object, so keying on it gives one
 * batch of relation lookups per event and instance, not one per subscriber.
 */
const loadersByEvent = new WeakMap<object, Loaders>();

function eventLoaders(event: Post, services: Services): Loaders {
  let loaders = loadersByEvent.get(event);
  if (!loaders) {
    loaders = createLoaders(services);
    loadersByEvent.set(event, loaders);
  }
  return loaders;
}

export const Subscription: SubscriptionResolvers<GraphQLContext> = {
  postCreated: {
    subscribe: (_root, _args, { services }) => services.events.subscribe('postCreated'),
    // Events of one subscription are executed one after the other, so no event sees another's swap.
    resolve: async (post: Post, _args: unknown, context: GraphQLContext) => {
      await context.authorizing; // the subscriber's access changed: shaped for its rights of now (SPEC §2)
      await deliveryTurn(); // a few subscribers per event-loop turn: one event to many does not hold the loop
      context.loaders = eventLoaders(post, context.services);
      return post;
    },
  },
};
