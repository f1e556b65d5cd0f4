// Mutation root resolvers: thin calls into the domain services, which decide authorization (@auth in the schema is the outer guard).
import type { MutationResolvers } from '../generated/resolvers.js';
import { AppError } from '../../errors/app-error.js';
import { consumeSignup } from '../../rest/route-options.js';
import type { GraphQLContext } from '../context.js';

export const Mutation: MutationResolvers<GraphQLContext> = {
  createUser: async (_root, { input }, { services, request }) => {
    // Sign-up bucket (SPEC §4), once per account: every alias and batched operation counts. Over a WebSocket there is
    // no HTTP request (client address) to count against, so sign-up is offered over HTTP only.
    if (!request) throw new AppError('BAD_REQUEST', 'createUser is not available over WebSocket; use POST /graphql');
    await consumeSignup(request);
    return services.users.create(input);
  },
  updateUser: (_root, { id, input, expectedVersion }, { principal, services }) =>
    services.users.update(principal, id, input, expectedVersion == null ? undefined : { versions: [expectedVersion] }),
  deleteUser: (_root, { id }, { services, principal }) => services.users.delete(principal, id),
  createPost: (_root, args, { principal, services }) => services.posts.create(principal, args),
};
