// PostConnection's one computed field: `totalCount`, counted only when a query selects it (SPEC §2, §4 "At scale").
import type { PostConnectionResolvers } from '../generated/resolvers.js';
import type { GraphQLContext } from '../context.js';

export const PostConnection: PostConnectionResolvers<GraphQLContext> = {
  totalCount: (connection) => connection.totalCount(),
};
