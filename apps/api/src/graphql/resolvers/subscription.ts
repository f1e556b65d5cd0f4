// Subscription root: postCreated streams every post created through either door, from the domain event bus.
import type { SubscriptionResolvers } from '@users-posts/contracts';
import type { Post } from '@users-posts/db';
import type { GraphQLContext } from '../context.js';
import { createLoaders } from '../loaders.js';

export const Subscription: SubscriptionResolvers<GraphQLContext> = {
  postCreated: {
    subscribe: (_root, _args, { services }) => services.events.subscribe('postCreated'),
    // A subscription's context lives as long as the subscription, so its DataLoader caches would serve the first
    // event's rows to every later event (a renamed author would keep the old name). Each event gets fresh loaders;
    // events of one subscription are executed one after the other, so no event sees another's swap.
    resolve: (post: Post, _args: unknown, context: GraphQLContext) => {
      context.loaders = createLoaders(context.services);
      return post;
    },
  },
};
