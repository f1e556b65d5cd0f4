// The Node interface (Relay's Global Object Identification): which type a node is, and `Query.node`'s lookup.
import type { NodeResolvers, QueryResolvers } from '../generated/resolvers.js';
import type { GraphQLContext } from '../context.js';
import { decodeNodeId } from '../node-ids.js';

export const Node: NodeResolvers<GraphQLContext> = {
  // A post row has an author; a user row has none.
  __resolveType: (node) => ('authorId' in node ? 'Post' : 'User'),
};

/** `Query.node`: the user or post a nodeId names, read as `user(id:)` and `post(id:)` read it; null for any other id. */
export const node: NonNullable<QueryResolvers<GraphQLContext>['node']> = async (_root, { nodeId }, { services }) => {
  const target = decodeNodeId(nodeId);
  if (!target) return null;
  return target.type === 'User' ? services.users.get(target.id) : services.posts.get(target.id);
};
