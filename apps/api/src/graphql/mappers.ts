// What the GraphQL object types are resolved from (codegen.yml's mappers): the Prisma rows of packages/db. Named here,
// in the server, so that the contract's types (packages/contracts, which packages/client uses) know nothing of Prisma.
export type { Post as PostModel, User as UserModel } from '@users-posts/db';
