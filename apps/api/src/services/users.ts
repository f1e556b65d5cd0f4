// The users domain: reads and writes of users, shared by the REST and GraphQL doors.
import { columnOf, PREPARED, Prisma, type PrismaClient, type Role, type SqlReader, type User } from '@users-posts/db';
import { CREATED_AT_FIELD, findPage, ID_FIELD, type PageResult, type PageSource } from '../collections/page.js';
import type { CollectionQuery } from '../collections/query.js';
import { DEFAULT_COLLECTION_LIMITS, type CollectionLimits } from '../collection-limits.js';
import { hashPassword, inLanes } from '../auth/credentials/passwords.js';
import type { AccountHooks } from '../auth/account-lifecycle.js';
import { assertStrongPassword } from '../auth/password-policy.js';
import { canActFor, requireRecentLogin, requireRole, type Principal } from '../auth/principal.js';
import { AppError, type FieldError } from '../errors/app-error.js';
import { parseId } from './ids.js';
import { translatePrismaError } from '../errors/prisma.js';
import { lockExpected, preconditionFailed, type Expectation } from './preconditions.js';
import { storedAsIs } from './storage-mapping.js';
import { countedRows } from '../collections/row-counts.js';
import { nullableFields, validateInput, type ContractInput, type Unvalidated } from './validation.js';
import { madeForTheCaller, mayReadEveryonesPrivate, privateFieldsOf } from './visibility.js';

/** SPEC §4 allow-list for sorting users. */
export const USER_SORT_FIELDS = ['id', 'name', 'email', 'age', 'createdAt'] as const;
export type UserSortField = (typeof USER_SORT_FIELDS)[number];

/** SPEC §4: search `q` over users matches these (the private ones only for callers who may see them: §3.1). */
const SEARCHABLE_USER_FIELDS = ['name', 'email'] as const;

export interface UserFilter {
  role?: Role | undefined;
  age?: number | undefined;
}

export interface Window {
  limit?: number | undefined;
  offset?: number | undefined;
}

/** Sign-up's input: the contract's CreateUserInput (a field added there reaches this type, and storage, by itself). */
export type NewUser = ContractInput<'CreateUserInput'>;
/** A change of some fields: the contract's UpdateUserInput. */
export type UserPatch = ContractInput<'UpdateUserInput'>;
/** A full replacement: the contract's ReplaceUserInput (omitted nullable fields become null). */
export type UserReplacement = ContractInput<'ReplaceUserInput'>;

/** The most rows `users` / `posts` return without a `limit` (SPEC §2: at least 1 000; documented in schema.graphql). */
export const LIST_MAX = 1000;

/** At most this many users per batch or bulk operation (SPEC §4, the contract's maxItems). */
export const BULK_MAX = 100;

const EMAIL_TAKEN = { field: 'email', message: 'is already in use' };

/** The columns of users no read ever loads: the credentials. */
const CREDENTIALS = ['passwordHash', 'tokenVersion'] as const satisfies readonly (keyof User)[];

/**
 * A user without its credentials: every other column of the model (a column added to prisma/schema.prisma is read and,
 * once a contract names it, answered, with no list here to extend), including the row version its ETag is made of and
 * its private fields (e-mail, verification), which each door shows per caller through services/visibility.ts. The reads
 * below load only these columns, so a read never holds a password hash (nothing to leak through a serializer or a log
 * of the object), and sends fewer bytes to parse; the writes return the same fields (PUBLIC_USER_SELECT).
 */
export type PublicUser = Omit<User, (typeof CREDENTIALS)[number]>;

const PUBLIC_USER_FIELDS = Object.values(Prisma.UserScalarFieldEnum).filter(
  (field): field is keyof PublicUser => !(CREDENTIALS as readonly string[]).includes(field),
);

/** The same fields as a Prisma `select`, for the rows the writes below return: they too hold no credentials. */
const PUBLIC_USER_SELECT = Object.fromEntries(PUBLIC_USER_FIELDS.map((field) => [field, true])) as Record<keyof PublicUser, true>;

/**
 * Those columns under the model's field names (packages/db's naming rule), for the hot reads through the SQL reader (by
 * id, by ids, lists, pages): the same values the Prisma client returns for them (test/rest/sql-reader.test.ts compares
 * them field by field).
 */
export const PUBLIC_USER_COLUMNS = PUBLIC_USER_FIELDS.map((field) => (columnOf(field) === field ? field : `${columnOf(field)} AS "${field}"`)).join(
  ', ',
);

/** The users collection for the pager: its sortable and filterable fields as columns. */
const USERS_PAGE: PageSource<UserSortField | keyof UserFilter> = {
  collection: 'users',
  table: 'users',
  counted: 'users',
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

const NO_HOOKS: AccountHooks = { created: () => undefined, emailChanged: () => undefined };

/** Locked in id order (the same order for every writer: no deadlock between two of them). */
const LOCK_ADMINS = Prisma.sql`SELECT id FROM users WHERE role = 'ADMIN' ORDER BY id FOR UPDATE`;

/**
 * Refuses (409 40902) a change that would leave no ADMIN: `leaving` are the users losing the role or being deleted.
 * The ADMIN rows are locked first, so two requests demoting the last two ADMINs one each cannot both pass.
 */
async function assertAdminsRemain(tx: Prisma.TransactionClient, leaving: readonly number[]): Promise<void> {
  const admins = await tx.$queryRaw<{ id: number }[]>(LOCK_ADMINS);
  if (admins.length > 0 && admins.every((admin) => leaving.includes(admin.id))) throw new AppError('LAST_ADMIN');
}

export class UsersService {
  /** Set once by the auth plugin (the lifecycle needs the identity module, built after the services). */
  private hooks: AccountHooks = NO_HOOKS;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly sql: SqlReader,
    private readonly limits: CollectionLimits = DEFAULT_COLLECTION_LIMITS,
  ) {}

  setAccountHooks(hooks: AccountHooks): void {
    this.hooks = hooks;
  }

  /** Users in id order; without a `limit`, every user up to LIST_MAX (SPEC §2: the work of one request is bounded). */
  list(window: Window = {}): Promise<PublicUser[]> {
    const text = `SELECT ${PUBLIC_USER_COLUMNS} FROM users ORDER BY id LIMIT $1 OFFSET $2`;
    return this.sql.rows<PublicUser>(text, [window.limit ?? LIST_MAX, window.offset ?? 0], PREPARED);
  }

  /** The fields `viewer` may sort users by: private ones (the e-mail) only for those who may read every user's. */
  sortableBy(viewer: Principal): readonly UserSortField[] {
    return mayReadEveryonesPrivate(viewer) ? USER_SORT_FIELDS : USER_SORT_FIELDS.filter((field) => !privateFieldsOf('User').has(field));
  }

  /**
   * One page of users by the collection conventions (filters by equality, search over name, and over the e-mail for
   * those who may read every user's: anyone else could find an address letter by letter).
   */
  page(viewer: Principal, query: CollectionQuery<UserSortField>, filter: UserFilter = {}): Promise<PageResult<PublicUser>> {
    const searchIn = SEARCHABLE_USER_FIELDS.filter((field) => mayReadEveryonesPrivate(viewer) || !privateFieldsOf('User').has(field));
    return findPage(this.sql, USERS_PAGE, query, { equal: { role: filter.role, age: filter.age }, searchIn }, this.limits);
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
  async create(input: Unvalidated<NewUser>): Promise<PublicUser> {
    validateInput('CreateUserInput', input);
    const data = await newUserData(input, 'password');
    let user: PublicUser;
    try {
      user = madeForTheCaller(await this.prisma.user.create({ data, select: PUBLIC_USER_SELECT }));
    } catch (error) {
      translatePrismaError(error, { unique: EMAIL_TAKEN });
    }
    this.hooks.created(user);
    return user;
  }

  /**
   * Changes a user: allowed for that user and for ADMINs; `role` only by an ADMIN. A caller who may not act on the
   * id gets 403 whether or not it exists (existence is not revealed); an ADMIN gets 404 for a missing one.
   */
  async update(principal: Principal, id: string | number, patch: Unvalidated<UserPatch>, expectation?: Expectation): Promise<PublicUser> {
    return this.change(principal, id, 'UpdateUserInput', patch, expectation);
  }

  /**
   * Full replacement (PUT): the contract's required fields required, every nullable field left out set to null, an
   * omitted `role` kept. The same rules as `update`: self or ADMIN, `role` only from an ADMIN (any `role`, even the
   * current one).
   */
  async replace(principal: Principal, id: string | number, input: Unvalidated<UserReplacement>, expectation?: Expectation): Promise<PublicUser> {
    const cleared = Object.fromEntries(nullableFields('ReplaceUserInput').map((field) => [field, null]));
    return this.change(principal, id, 'ReplaceUserInput', { ...cleared, ...input }, expectation);
  }

  private async change(
    principal: Principal,
    id: string | number,
    schema: 'UpdateUserInput' | 'ReplaceUserInput',
    input: Unvalidated<UserPatch>,
    expectation?: Expectation,
  ): Promise<PublicUser> {
    const dbId = parseId(id);
    if (principal.kind === 'anonymous') throw new AppError('UNAUTHENTICATED');
    if (dbId === null || !canActFor(principal, dbId)) {
      throw principal.role === 'ADMIN'
        ? new AppError('NOT_FOUND', 'User not found')
        : new AppError('FORBIDDEN', 'You may only change your own account');
    }
    if (input.role != null && principal.role !== 'ADMIN') throw new AppError('FORBIDDEN', 'Only an ADMIN may change a role');
    validateInput(schema, input);
    const data = userPatchData(input);
    const ownAccount = principal.kind === 'user' && principal.userId === dbId;
    let previousEmail: string | undefined;
    let user: PublicUser;
    try {
      user = await this.prisma.$transaction(async (tx) => {
        if (expectation) await lockExpected(tx, 'users', dbId, 'User', expectation);
        if (data.role === 'USER') await assertAdminsRemain(tx, [dbId]);
        if (data.email !== undefined) {
          const current = await tx.user.findUnique({ where: { id: dbId }, select: { email: true } });
          if (current && current.email !== data.email) {
            // One's own e-mail is where resets go: changing it needs a recent login (SPEC §3.2), not just any credential.
            if (ownAccount) requireRecentLogin(principal);
            previousEmail = current.email;
          }
        }
        // The service verified the old address, not a new one (and OpenID linking trusts only a verified address).
        const verification = previousEmail === undefined ? {} : { emailVerifiedAt: null };
        return tx.user.update({ where: { id: dbId }, data: { ...data, ...verification }, select: PUBLIC_USER_SELECT });
      });
    } catch (error) {
      translatePrismaError(error, { unique: EMAIL_TAKEN, missing: 'User not found' });
    }
    if (previousEmail !== undefined) this.hooks.emailChanged(user, previousEmail);
    return user;
  }

  /**
   * Creates 1–100 USERs all or nothing, in one transaction. Every invalid user is named as `users[i].field` (422);
   * an email repeated inside the batch (the later occurrences) or already in use is named as `users[i].email` (409).
   */
  async createMany(principal: Principal, users: readonly Unvalidated<NewUser>[]): Promise<PublicUser[]> {
    requireRole(principal, 'ADMIN');
    const batch = { users };
    validateInput('BatchCreateUsersInput', batch); // 1–100 users (the contract's bounds), each named as `users[i].field`
    const inputs = batch.users;

    const emails = inputs.map((input) => input.email.toLowerCase());
    const repeated: FieldError[] = [];
    emails.forEach((email, index) => {
      if (emails.indexOf(email) !== index) repeated.push({ field: `users[${index}].email`, message: 'is repeated in the batch' });
    });
    if (repeated.length) throw conflict(repeated);

    // Hashed in lanes, not all at once: a batch leaves the thread pool to logins meanwhile (credentials/passwords.ts).
    const rows = await inLanes(inputs, (input, index) => newUserData(input, `users[${index}].password`));
    const created = await this.prisma.$transaction(async (tx) => {
      const taken = await tx.user.findMany({ where: { email: { in: emails } }, select: { email: true } });
      if (taken.length) {
        const takenEmails = new Set(taken.map((row) => row.email));
        throw conflict(
          emails.flatMap((email, index) => (takenEmails.has(email) ? [{ field: `users[${index}].email`, message: 'is already in use' }] : [])),
        );
      }
      const created: PublicUser[] = [];
      for (const index of inputs.keys()) {
        try {
          created.push(
            await tx.user.create({
              data: rows[index]!,
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
    for (const user of created) this.hooks.created(user);
    return created;
  }

  /**
   * Applies one patch to every existing user among `ids` (ADMIN), all or nothing; ids that do not exist are skipped.
   * Decision: `email` is accepted in bulk data but may only land on one user — when more than one of the ids exists
   * the emails would collide, so 409 naming `data.email` (as would an email already used by another user).
   * Returns how many users were updated.
   */
  async updateMany(principal: Principal, ids: readonly number[], patch: Unvalidated<UserPatch>): Promise<number> {
    requireRole(principal, 'ADMIN');
    const bulk = { ids: [...ids], data: patch };
    validateInput('BulkUpdateUsersInput', bulk); // 1–100 ids, and the data named as `data.field`
    const data = userPatchData(bulk.data);
    const emailTaken = { field: 'data.email', message: 'is already in use' };
    return this.prisma.$transaction(async (tx) => {
      const existing = await tx.user.findMany({ where: { id: { in: [...ids] } }, select: { id: true } });
      if (data.email !== undefined && existing.length > 1) {
        throw conflict([{ field: 'data.email', message: 'cannot be set on more than one user' }]);
      }
      if (existing.length === 0) return 0;
      const targets = existing.map((row) => row.id);
      if (data.role === 'USER') await assertAdminsRemain(tx, targets);
      try {
        await clearVerificationUnlessEmail(tx, targets, data.email);
        const { count } = await tx.user.updateMany({ where: { id: { in: targets } }, data });
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
    return this.prisma.$transaction(async (tx) => {
      await assertAdminsRemain(tx, ids);
      return (await tx.user.deleteMany({ where: { id: { in: [...ids] } } })).count;
    });
  }

  /** Deletes a user (ADMIN; their posts, comments and orders cascade); false when no user had this id. */
  async delete(principal: Principal, id: string | number, expectation?: Expectation): Promise<boolean> {
    requireRole(principal, 'ADMIN');
    const dbId = parseId(id);
    if (dbId === null) {
      if (expectation) throw preconditionFailed('User', undefined);
      return false;
    }
    return this.prisma.$transaction(async (tx) => {
      if (expectation) await lockExpected(tx, 'users', dbId, 'User', expectation);
      await assertAdminsRemain(tx, [dbId]);
      return (await tx.user.deleteMany({ where: { id: dbId } })).count === 1;
    });
  }

  /** How many users there are: exact, from the counters the writes keep (O(1)). */
  count(): Promise<number> {
    return countedRows(this.sql, 'users');
  }
}

/**
 * The row of a new USER: the contract's fields as they are (storage-mapping.ts), the e-mail lower-cased, the password
 * checked against the password policy (named as `passwordField`) and hashed.
 */
async function newUserData(input: NewUser, passwordField: string) {
  if (input.password) assertStrongPassword(input.password, input.email, passwordField);
  const passwordHash = input.password ? await hashPassword(input.password) : null;
  return { ...storedAsIs('User', input), email: input.email.toLowerCase(), passwordHash, role: 'USER' as const };
}

/** The columns a validated patch changes: the contract's fields as they are, the e-mail lower-cased. */
function userPatchData(patch: UserPatch) {
  return { ...storedAsIs('User', patch), ...(patch.email === undefined ? {} : { email: patch.email.toLowerCase() }) };
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
