// User field resolvers: relations through DataLoaders, timestamps as ISO-8601.
import type { UserResolvers } from '@users-posts/contracts';
import type { GraphQLContext } from '../context.js';

export const User: UserResolvers<GraphQLContext> = {
  createdAt: (user) => user.createdAt.toISOString(),
  posts: (user, _args, { loaders }) => loaders.postsByAuthorId.load(user.id),
};
