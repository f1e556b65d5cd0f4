// The users domain: reads and writes of users, shared by the REST and GraphQL doors.
import { PREPARED, type Prisma, type PrismaClient, type Role, type SqlReader, type User } from '@users-posts/db';
import { CREATED_AT_FIELD, findPage, ID_FIELD, type PageResult, type PageSource } from '../collections/page.js';
import type { CollectionQuery } from '../collections/query.js';
import { hashPassword } from '../auth/credentials/passwords.js';
import { canActFor, requireRole, type Principal } from '../auth/principal.js';
import { AppError, type FieldError } from '../errors/app-error.js';
import { parseId } from './ids.js';
import { translatePrismaError } from '../errors/prisma.js';
import { lockExpected, preconditionFailed, type Expectation } from './preconditions.js';
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

export interface UserReplacement {
  name: string;
  email: string;
  /** Omitted or null: the age becomes null (full replacement). */
  age?: number | null | undefined;
  /** Omitted: the role is kept. Only an ADMIN may send one. */
  role?: Role | undefined;
}

/** The most rows `users` / `posts` return without a `limit` (SPEC §2: at least 1 000; documented in schema.graphql). */
export const LIST_MAX = 1000;

/** At most this many users per batch or bulk operation (SPEC §4, the contract's maxItems). */
export const BULK_MAX = 100;

const EMAIL_TAKEN = { field: 'email', message: 'is already in use' };

/**
 * A user as any reader may see it: the contract's User and the row version its ETag is made of, never the credentials
 * (password hash, token version, e-mail verification). The reads below load only these columns, so a public read never
 * holds a password hash (nothing to leak through a serializer or a log of the object), and sends fewer bytes to parse;
 * the writes return the same fields (PUBLIC_USER_SELECT).
 */
const PUBLIC_USER_FIELDS = {
  id: 'id',
  name: 'name',
  email: 'email',
  age: 'age',
  role: 'role',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  version: 'version',
} as const satisfies Partial<Record<keyof User, string>>;

export type PublicUser = Pick<User, keyof typeof PUBLIC_USER_FIELDS>;

/** The same fields as a Prisma `select`, for the rows the writes below return: they too hold no credentials. */
const PUBLIC_USER_SELECT = Object.fromEntries(Object.keys(PUBLIC_USER_FIELDS).map((field) => [field, true])) as Record<keyof PublicUser, true>;

/**
 * Those columns under the model's field names, for the hot reads through the SQL reader (by id, by ids, lists, pages):
 * the same values the Prisma client returns for them (test/rest/sql-reader.test.ts compares them field by field).
 */
export const PUBLIC_USER_COLUMNS = Object.entries(PUBLIC_USER_FIELDS)
  .map(([field, column]) => (field === column ? column : `${column} AS "${field}"`))
  .join(', ');

/** The users collection for the pager: its sortable and filterable fields as columns. */
const USERS_PAGE: PageSource<UserSortField | keyof UserFilter> = {
  collection: 'users',
  table: 'users',
  columns: PUBLIC_USER_COLUMNS,
  fields: {
    id: ID_FIELD,
    name: { column: 'name', kind: 'string' },
    email: { column: 'email', kind: 'string' },
    age: { column: 'age', kind: 'integer', nullable: true },
    createdAt: CREATED_AT_FIELD,
    role: { column: 'role', kind: ['ADMIN', 'USER'], cast: '"Role"' },
  },
};

export class UsersService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly sql: SqlReader,
  ) {}

  /** Users in id order; without a `limit`, every user up to LIST_MAX (SPEC §2: the work of one request is bounded). */
  list(window: Window = {}): Promise<PublicUser[]> {
    const text = `SELECT ${PUBLIC_USER_COLUMNS} FROM users ORDER BY id LIMIT $1 OFFSET $2`;
    return this.sql.rows<PublicUser>(text, [window.limit ?? LIST_MAX, window.offset ?? 0], PREPARED);
  }

  /** One page of users by the collection conventions (filters by equality, search over name and email). */
  page(query: CollectionQuery<UserSortField>, filter: UserFilter = {}): Promise<PageResult<PublicUser>> {
    return findPage(this.sql, USERS_PAGE, query, { equal: { role: filter.role, age: filter.age }, searchIn: ['name', 'email'] });
  }

  /** The user with this external id, or null. */
  async get(id: string | number): Promise<PublicUser | null> {
    const dbId = parseId(id);
    if (dbId === null) return null;
    const [user] = await this.sql.rows<PublicUser>(`SELECT ${PUBLIC_USER_COLUMNS} FROM users WHERE id = $1`, [dbId], PREPARED);
    return user ?? null;
  }

  /** Users by id, in the order asked, null where missing (DataLoader batch function). */
  async getMany(ids: readonly number[]): Promise<(PublicUser | null)[]> {
    const rows = await this.sql.rows<PublicUser>(`SELECT ${PUBLIC_USER_COLUMNS} FROM users WHERE id = ANY($1)`, [ids], PREPARED);
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  /** Sign-up: a new USER (the role of a new user is never chosen by the caller). */
  async create(input: NewUser): Promise<PublicUser> {
    requireFields(input as unknown as Record<string, unknown>, ['name', 'email']);
    validate(input as unknown as Record<string, unknown>, { name: true, email: true, age: true, password: true });
    const passwordHash = input.password ? await hashPassword(input.password) : null;
    try {
      return await this.prisma.user.create({
        data: { name: input.name, email: input.email.toLowerCase(), age: input.age ?? null, passwordHash, role: 'USER' },
        select: PUBLIC_USER_SELECT,
      });
    } catch (error) {
      translatePrismaError(error, { unique: EMAIL_TAKEN });
    }
  }

  /**
   * Changes a user: allowed for that user and for ADMINs; `role` only by an ADMIN. A caller who may not act on the
   * id gets 403 whether or not it exists (existence is not revealed); an ADMIN gets 404 for a missing one.
   */
  async update(principal: Principal, id: string | number, patch: UserPatch, expectation?: Expectation): Promise<PublicUser> {
    const dbId = parseId(id);
    if (principal.kind === 'anonymous') throw new AppError('UNAUTHENTICATED');
    if (dbId === null || !canActFor(principal, dbId)) {
      throw principal.role === 'ADMIN'
        ? new AppError('NOT_FOUND', 'User not found')
        : new AppError('FORBIDDEN', 'You may only change your own account');
    }
    if (patch.role !== undefined && principal.role !== 'ADMIN') throw new AppError('FORBIDDEN', 'Only an ADMIN may change a role');
    validate(patch as Record<string, unknown>, { name: true, email: true, age: true });
    const email = patch.email?.toLowerCase();
    const data = { name: patch.name ?? undefined, email, age: patch.age, role: patch.role };
    try {
      if (expectation) {
        return await this.prisma.$transaction(async (tx) => {
          await lockExpected(tx, 'users', dbId, 'User', expectation);
          await clearVerificationUnlessEmail(tx, [dbId], email);
          return tx.user.update({ where: { id: dbId }, data, select: PUBLIC_USER_SELECT });
        });
      }
      const [, user] = await this.prisma.$transaction([
        clearVerificationUnlessEmail(this.prisma, [dbId], email),
        this.prisma.user.update({ where: { id: dbId }, data, select: PUBLIC_USER_SELECT }),
      ]);
      return user;
    } catch (error) {
      translatePrismaError(error, { unique: EMAIL_TAKEN, missing: 'User not found' });
    }
  }

  /**
   * Full replacement (PUT): `name` and `email` required, an omitted `age` becomes null, an omitted `role` is kept.
   * The same rules as `update`: self or ADMIN, `role` only from an ADMIN (any `role`, even the current one).
   */
  async replace(principal: Principal, id: string | number, input: UserReplacement, expectation?: Expectation): Promise<PublicUser> {
    requireFields(input as unknown as Record<string, unknown>, ['name', 'email']);
    return this.update(principal, id, { name: input.name, email: input.email, age: input.age ?? null, role: input.role }, expectation);
  }

  /**
   * Creates 1–100 USERs all or nothing, in one transaction. Every invalid user is named as `users[i].field` (422);
   * an email repeated inside the batch (the later occurrences) or already in use is named as `users[i].email` (409).
   */
  async createMany(principal: Principal, inputs: readonly NewUser[]): Promise<PublicUser[]> {
    requireRole(principal, 'ADMIN');
    if (inputs.length === 0 || inputs.length > BULK_MAX) {
      throw new AppError('VALIDATION_FAILED', 'Validation failed', [{ field: 'users', message: `must hold 1 to ${BULK_MAX} users` }]);
    }
    const invalid: FieldError[] = [];
    inputs.forEach((input, index) => {
      const prefix = `users[${index}].`;
      const record = input as unknown as Record<string, unknown>;
      try {
        requireFields(record, ['name', 'email'], prefix);
        validate(record, { name: true, email: true, age: true, password: true }, prefix);
      } catch (error) {
        if (!(error instanceof AppError) || !error.fields) throw error;
        invalid.push(...error.fields);
      }
    });
    if (invalid.length) throw new AppError('VALIDATION_FAILED', 'Validation failed', invalid);

    const emails = inputs.map((input) => input.email.toLowerCase());
    const repeated: FieldError[] = [];
    emails.forEach((email, index) => {
      if (emails.indexOf(email) !== index) repeated.push({ field: `users[${index}].email`, message: 'is repeated in the batch' });
    });
    if (repeated.length) throw conflict(repeated);

    const passwordHashes = await Promise.all(inputs.map((input) => (input.password ? hashPassword(input.password) : null)));
    return this.prisma.$transaction(async (tx) => {
      const taken = await tx.user.findMany({ where: { email: { in: emails } }, select: { email: true } });
      if (taken.length) {
        const takenEmails = new Set(taken.map((row) => row.email));
        throw conflict(
          emails.flatMap((email, index) => (takenEmails.has(email) ? [{ field: `users[${index}].email`, message: 'is already in use' }] : [])),
        );
      }
      const created: PublicUser[] = [];
      for (const [index, input] of inputs.entries()) {
        try {
          created.push(
            await tx.user.create({
              data: { name: input.name, email: emails[index]!, age: input.age ?? null, passwordHash: passwordHashes[index] ?? null, role: 'USER' },
              select: PUBLIC_USER_SELECT,
            }),
          );
        } catch (error) {
          // Taken by a concurrent writer since the check: the transaction is rolled back by the throw.
          translatePrismaError(error, { unique: { field: `users[${index}].email`, message: 'is already in use' } });
        }
      }
      return created;
    });
  }

  /**
   * Applies one patch to every existing user among `ids` (ADMIN), all or nothing; ids that do not exist are skipped.
   * Decision: `email` is accepted in bulk data but may only land on one user — when more than one of the ids exists
   * the emails would collide, so 409 naming `data.email` (as would an email already used by another user).
   * Returns how many users were updated.
   */
  async updateMany(principal: Principal, ids: readonly number[], patch: UserPatch): Promise<number> {
    requireRole(principal, 'ADMIN');
    if (ids.length === 0 || ids.length > BULK_MAX) {
      throw new AppError('VALIDATION_FAILED', 'Validation failed', [{ field: 'ids', message: `must hold 1 to ${BULK_MAX} ids` }]);
    }
    validate(patch as Record<string, unknown>, { name: true, email: true, age: true }, 'data.');
    const emailTaken = { field: 'data.email', message: 'is already in use' };
    return this.prisma.$transaction(async (tx) => {
      const existing = await tx.user.findMany({ where: { id: { in: [...ids] } }, select: { id: true } });
      if (patch.email != null && existing.length > 1) {
        throw conflict([{ field: 'data.email', message: 'cannot be set on more than one user' }]);
      }
      if (existing.length === 0) return 0;
      try {
        await clearVerificationUnlessEmail(
          tx,
          existing.map((row) => row.id),
          patch.email?.toLowerCase(),
        );
        const { count } = await tx.user.updateMany({
          where: { id: { in: existing.map((row) => row.id) } },
          data: { name: patch.name ?? undefined, email: patch.email?.toLowerCase(), age: patch.age, role: patch.role },
        });
        return count;
      } catch (error) {
        translatePrismaError(error, { unique: emailTaken });
      }
    });
  }

  /** Deletes the users with these ids (ADMIN; their data cascades) in one statement; returns how many existed. */
  async deleteMany(principal: Principal, ids: readonly number[]): Promise<number> {
    requireRole(principal, 'ADMIN');
    if (ids.length === 0) return 0;
    const { count } = await this.prisma.user.deleteMany({ where: { id: { in: [...ids] } } });
    return count;
  }

  /** Deletes a user (ADMIN; their posts, comments and orders cascade); false when no user had this id. */
  async delete(principal: Principal, id: string | number, expectation?: Expectation): Promise<boolean> {
    requireRole(principal, 'ADMIN');
    const dbId = parseId(id);
    if (dbId === null) {
      if (expectation) throw preconditionFailed('User', undefined);
      return false;
    }
    if (expectation) {
      return this.prisma.$transaction(async (tx) => {
        await lockExpected(tx, 'users', dbId, 'User', expectation);
        return (await tx.user.deleteMany({ where: { id: dbId } })).count === 1;
      });
    }
    const { count } = await this.prisma.user.deleteMany({ where: { id: dbId } });
    return count === 1;
  }

  count(): Promise<number> {
    return this.prisma.user.count();
  }
}

/**
 * Clears `emailVerifiedAt` of those users whose e-mail `email` would change (no-op when the patch has no e-mail): the
 * service verified the old address, not the new one, and OpenID linking trusts only a verified address (issue 10).
 */
function clearVerificationUnlessEmail(db: Pick<PrismaClient, 'user'>, ids: number[], email: string | undefined) {
  const where: Prisma.UserWhereInput = email === undefined ? { id: { in: [] } } : { id: { in: ids }, NOT: { email } };
  return db.user.updateMany({ where, data: { emailVerifiedAt: null } });
}

function conflict(fields: FieldError[]): AppError {
  return new AppError('CONFLICT', fields.map((field) => `${field.field} ${field.message}`).join('; '), fields);
}
