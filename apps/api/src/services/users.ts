// The users domain: reads and writes of users, shared by the REST and GraphQL doors.
import type { Prisma, PrismaClient, Role, User } from '@users-posts/db';
import { findPage, type PageResult } from '../collections/page.js';
import type { CollectionQuery } from '../collections/query.js';
import { hashPassword } from '../auth/passwords.js';
import { canActFor, type Principal } from '../auth/principal.js';
import { AppError } from '../errors.js';
import { parseId } from './ids.js';
import { translatePrismaError } from './prisma-errors.js';
import { requireFields, validate } from './validation.js';

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

export interface NewUser {
  name: string;
  email: string;
  age?: number | null | undefined;
  password?: string | null | undefined;
}

export interface UserPatch {
  /** null is refused by validation (GraphQL inputs can send an explicit null). */
  name?: string | null | undefined;
  email?: string | null | undefined;
  /** null clears the age. */
  age?: number | null | undefined;
  role?: Role | undefined;
}

const EMAIL_TAKEN = { field: 'email', message: 'is already in use' };

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

  /** Sign-up: a new USER (the role of a new user is never chosen by the caller). */
  async create(input: NewUser): Promise<User> {
    requireFields(input as unknown as Record<string, unknown>, ['name', 'email']);
    validate(input as unknown as Record<string, unknown>, { name: true, email: true, age: true, password: true });
    const passwordHash = input.password ? await hashPassword(input.password) : null;
    try {
      return await this.prisma.user.create({
        data: { name: input.name, email: input.email.toLowerCase(), age: input.age ?? null, passwordHash, role: 'USER' },
      });
    } catch (error) {
      translatePrismaError(error, { unique: EMAIL_TAKEN });
    }
  }

  /**
   * Changes a user: allowed for that user and for ADMINs; `role` only by an ADMIN. A caller who may not act on the
   * id gets 403 whether or not it exists (existence is not revealed); an ADMIN gets 404 for a missing one.
   */
  async update(principal: Principal, id: string | number, patch: UserPatch): Promise<User> {
    const dbId = parseId(id);
    if (principal.kind === 'anonymous') throw new AppError('UNAUTHENTICATED');
    if (dbId === null || !canActFor(principal, dbId)) {
      throw principal.role === 'ADMIN' ? new AppError('NOT_FOUND', 'User not found') : new AppError('FORBIDDEN', 'You may only change your own account');
    }
    if (patch.role !== undefined && principal.role !== 'ADMIN') throw new AppError('FORBIDDEN', 'Only an ADMIN may change a role');
    validate(patch as Record<string, unknown>, { name: true, email: true, age: true });
    try {
      return await this.prisma.user.update({
        where: { id: dbId },
        data: { name: patch.name ?? undefined, email: patch.email?.toLowerCase(), age: patch.age, role: patch.role },
      });
    } catch (error) {
      translatePrismaError(error, { unique: EMAIL_TAKEN, missing: 'User not found' });
    }
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
