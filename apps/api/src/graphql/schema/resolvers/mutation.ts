// Mutation root resolvers: thin calls into the domain services, which decide authorization (@auth in the schema is the outer guard).
import type { CreateUserInput, MutationResolvers, UpdateUserInput } from '../generated/resolvers.js';
import type { ContractInput, InputSchema } from '../../../services/validation.js';
import type { GraphQLContext } from '../context.js';

/**
 * The services take the REST contract's input types, which the domain validates for both doors; a GraphQL input of the
 * same name must carry the same fields, or a field added to one contract would be dropped by the other door. A field
 * in one only fails the type check here, naming it ("Type '"bio"' does not satisfy the constraint 'never'").
 */
type FieldsInOneOnly<GraphqlInput, Name extends InputSchema> =
  Exclude<keyof GraphqlInput, keyof ContractInput<Name>> | Exclude<keyof ContractInput<Name>, keyof GraphqlInput>;
type None<Fields extends never> = Fields;
export type InputsAgree = [None<FieldsInOneOnly<CreateUserInput, 'CreateUserInput'>>, None<FieldsInOneOnly<UpdateUserInput, 'UpdateUserInput'>>];

/** On creation an explicit null means what leaving the field out means (GraphQL clients send null for unset variables). */
const withoutNulls = <T extends object>(input: T) => Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null)) as T;

export const Mutation: MutationResolvers<GraphQLContext> = {
  createUser: async (_root, { input }, { services, consumeSignup }) => {
    // Sign-up bucket (SPEC §4), once per account: every alias, batched operation and WebSocket operation counts.
    await consumeSignup();
    return services.users.create(withoutNulls(input));
  },
  updateUser: (_root, { id, input, expectedVersion }, { principal, services, consumeSignup }) =>
    // One's own e-mail is priced as a sign-up (issue 40): every alias counts, as createUser's do.
    services.users.update(
      principal,
      id,
      input,
      { admitEmailChange: consumeSignup },
      expectedVersion == null ? undefined : { versions: [expectedVersion] },
    ),
  deleteUser: (_root, { id }, { services, principal }) => services.users.delete(principal, id),
  createPost: (_root, args, { principal, services }) => services.posts.create(principal, args),
};
