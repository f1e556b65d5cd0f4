// The default context type of the generated resolver signatures; apps/api passes its own context type.

/** Base of every GraphQL context. Resolver types are generic (`Resolvers<Context>`), so servers supply theirs. */
export type GraphQLContext = object;
