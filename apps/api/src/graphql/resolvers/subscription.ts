// Subscription root: postCreated streams every post created through either door, from the domain event bus.
import type { SubscriptionResolvers } from '@users-posts/contracts';
import type { Post } from '@users-posts/db';
import type { GraphQLContext } from '../context.js';

export const Subscription: SubscriptionResolvers<GraphQLContext> = {
  postCreated: {
    subscribe: (_root, _args, { services }) => services.events.subscribe('postCreated'),
    resolve: (post: Post) => post,
  },
};
