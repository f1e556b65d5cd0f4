// Public surface of the contracts package: generated GraphQL/REST types and typed helpers over them.
export type * from './generated/graphql.js';
export type { paths, components, operations } from './generated/openapi.js';
export type * from './rest.js';
export type { GraphQLContext } from './graphql-context.js';
