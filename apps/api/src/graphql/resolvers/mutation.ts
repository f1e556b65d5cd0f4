// Mutation root resolvers: thin calls into the domain services (authentication comes from @auth in the schema).
import type { MutationResolvers } from '@users-posts/contracts';
import type { GraphQLContext } from '../context.js';

export const Mutation: MutationResolvers<GraphQLContext> = {
  createUser: (_root, { input }, { services }) => services.users.create(input),
  updateUser: (_root, { id, input }, { principal, services }) => services.users.update(principal, id, input),
  deleteUser: (_root, { id }, { services }) => services.users.delete(id),
  createPost: (_root, args, { principal, services }) => services.posts.create(principal, args),
};
