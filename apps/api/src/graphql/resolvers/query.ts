// Query root resolvers: thin calls into the domain services.
import type { QueryResolvers } from '@users-posts/contracts';
import { requireUser } from '../../auth/principal.js';
import { AppError } from '../../errors.js';
import { windowArgs } from '../arguments.js';
import type { GraphQLContext } from '../context.js';

export const Query: QueryResolvers<GraphQLContext> = {
  users: (_root, args, { services }) => services.users.list(windowArgs(args)),
  user: (_root, { id }, { services }) => services.users.get(id),
  posts: (_root, args, { services }) => services.posts.list(windowArgs(args)),
  post: (_root, { id }, { services }) => services.posts.get(id),
  currentUser: async (_root, _args, { principal, services }) => {
    const user = await services.users.get(requireUser(principal).userId);
    if (!user) throw new AppError('UNAUTHENTICATED', 'The user of these credentials no longer exists');
    return user;
  },
};
