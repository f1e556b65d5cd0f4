// Public surface of the contracts package: the GraphQL schema's types, the REST types, and typed helpers over them.
// Nothing of ours beyond the contracts: the server's resolver signatures (mapped to its Prisma rows) live in the server.
export type * from './generated/graphql.js';
export type { paths, components, operations } from './generated/openapi.js';
export type * from './rest.js';
export { PRIVATE_FIELDS } from './generated/private-fields.js';
export { COLLECTION_WINDOW, REPRESENTATION_FIELDS } from './generated/representation-fields.js';
// Every bound the code reads (scripts/contracts/bounds.ts lists them): a new one is exported without a line here.
export * from './generated/bounds.js';
