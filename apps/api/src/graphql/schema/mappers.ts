// What the GraphQL object types are resolved from (codegen.yml's mappers): the Prisma rows of packages/db, a user without
// its credentials (services/users.ts). Named here, in the server, so that the contract's types (packages/contracts, which
// packages/client uses) know nothing of Prisma.
export type { Post as PostModel } from '@users-posts/db';
export type { PublicUser as UserModel } from '../../services/users.js';

/** A connection page whose `totalCount` is counted only when a query selects it (resolvers/post-connection.ts). */
export interface PostConnectionModel {
  edges: { cursor: string; node: import('@users-posts/db').Post }[];
  pageInfo: { startCursor: string | null; endCursor: string | null; hasNextPage: boolean; hasPreviousPage: boolean };
  totalCount: () => Promise<number>;
}
