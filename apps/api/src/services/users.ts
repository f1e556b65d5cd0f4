// The users domain: reads and writes of users, shared by the REST and GraphQL doors.
import type { Prisma, PrismaClient, Role, User } from '@users-posts/db';
import { findPage, type PageResult } from '../collections/page.js';
import type { CollectionQuery } from '../collections/query.js';
import { parseId } from './ids.js';

/** SPEC §4 allow-list for sorting users. */
export const USER_SORT_FIELDS = ['id', 'name', 'email', 'age', 'createdAt'] as const;
export type UserSortField = (typeof USER_SORT_FIELDS)[number];

export interface UserFilter {
  role?: Role | undefined;
  age?: number | undefined;
}

export interface Window {
  limit?: number | undefined;
  offset?: number | undefined;
}

export class UsersService {
  constructor(private readonly prisma: PrismaClient) {}

  /** Users in id order; every user when no window is given. */
  list(window: Window = {}): Promise<User[]> {
    return this.prisma.user.findMany({ orderBy: { id: 'asc' }, take: window.limit, skip: window.offset });
  }

  /** One page of users by the collection conventions (filters by equality, search over name and email). */
  page(query: CollectionQuery<UserSortField>, filter: UserFilter = {}): Promise<PageResult<User>> {
    const where: Prisma.UserWhereInput = { role: filter.role, age: filter.age };
    if (query.search) {
      where.OR = [
        { name: { contains: query.search, mode: 'insensitive' } },
        { email: { contains: query.search, mode: 'insensitive' } },
      ];
    }
    return findPage(this.prisma.user, query, { where, nullable: ['age'], dates: ['createdAt'] });
  }

  /** The user with this external id, or null. */
  async get(id: string | number): Promise<User | null> {
    const dbId = parseId(id);
    return dbId === null ? null : this.prisma.user.findUnique({ where: { id: dbId } });
  }

  /** Users by id, in the order asked, null where missing (DataLoader batch function). */
  async getMany(ids: readonly number[]): Promise<(User | null)[]> {
    const rows = await this.prisma.user.findMany({ where: { id: { in: [...ids] } } });
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  /** Deletes a user (their posts, comments and orders cascade); false when no user had this id. */
  async delete(id: string | number): Promise<boolean> {
    const dbId = parseId(id);
    if (dbId === null) return false;
    const { count } = await this.prisma.user.deleteMany({ where: { id: dbId } });
    return count === 1;
  }

  count(): Promise<number> {
    return this.prisma.user.count();
  }
}
