// Query root resolvers: thin calls into the domain services.
import type { QueryResolvers } from '../generated/resolvers.js';
import { requireUser } from '../../../auth/principal.js';
import { AppError } from '../../../errors/app-error.js';
import { windowArgs } from '../arguments.js';
import { node } from './node.js';
import { rememberUsers } from '../loaders.js';
import type { GraphQLContext } from '../context.js';

export const Query: QueryResolvers<GraphQLContext> = {
  users: async (_root, args, { services, loaders }) => {
    const users = await services.users.list(windowArgs(args, services.limits));
    // The authors a nested `posts { author }` asks for are mostly these users: known now, not read again.
    rememberUsers(loaders, users);
    return users;
  },
  user: (_root, { id }, { services }) => services.users.get(id),
  posts: (_root, args, { services }) => services.posts.list(windowArgs(args, services.limits)),
  post: (_root, { id }, { services }) => services.posts.get(id),
  node,
  recentPosts: (_root, { limit }, { services }) => services.posts.recent(limit ?? 10),
  statistics: async (_root, _args, { services }) => {
    const [totalUsers, totalPosts] = await Promise.all([services.users.count(), services.posts.count()]);
    return { totalUsers, totalPosts };
  },
  postsConnection: async (_root, { first, after }, { services }) => {
    const page = await services.posts.connection(first ?? 20, after);
    return {
      edges: page.posts.map((node, index) => ({ cursor: page.cursors[index]!, node })),
      pageInfo: {
        startCursor: page.cursors[0] ?? null,
        endCursor: page.cursors.at(-1) ?? null,
        hasNextPage: page.hasNextPage,
        hasPreviousPage: page.hasPreviousPage,
      },
      totalCount: page.totalCount,
    };
  },
  currentUser: async (_root, _args, { principal, services }) => {
    const user = await services.users.get(requireUser(principal).userId);
    if (!user) throw new AppError('UNAUTHENTICATED', 'The user of these credentials no longer exists');
    return user;
  },
};
