// Mutation root resolvers: thin calls into the domain services (authorization comes from @auth in the schema).
import type { MutationResolvers } from '@users-posts/contracts';
import type { GraphQLContext } from '../context.js';

export const Mutation: MutationResolvers<GraphQLContext> = {
  deleteUser: (_root, { id }, { services }) => services.users.delete(id),
};
