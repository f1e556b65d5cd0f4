// What the GraphQL object types are resolved from (codegen.yml's mappers): the Prisma rows of packages/db, a user without
// its credentials (services/users.ts). Named here, in the server, so that the contract's types (packages/contracts, which
// packages/client uses) know nothing of Prisma.
export type { Post as PostModel } from '@users-posts/db';
export type { PublicUser as UserModel } from '../services/users.js';
