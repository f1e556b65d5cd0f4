// Optimistic concurrency for writes of one row: what the writer expects of it (REST `If-Match`, GraphQL
// `expectedVersion`), checked under the row's lock in the write's own transaction, so no other write slips between.
import type { PrismaClient } from '@users-posts/db';
import { AppError } from '../errors/app-error.js';

/** The row is at one of these versions (`If-Match: "3"`, `expectedVersion: 3`), or merely exists (`If-Match: *`). */
export type Expectation = { versions: readonly number[] } | 'exists';

/** The tables whose rows carry a `version` (bumped by the database on every update). */
type VersionedTable = 'users' | 'orders';
type Transaction = Pick<PrismaClient, '$queryRawUnsafe'>;

/** 412: the row is gone, or at another version than expected (then carried, for the ETag or `extensions`). */
export function preconditionFailed(what: string, current: number | undefined): AppError {
  return current === undefined
    ? new AppError('PRECONDITION_FAILED', `${what} does not exist`)
    : new AppError('PRECONDITION_FAILED', `${what} has changed: it is now at version ${current}`, undefined, current);
}

/** Locks row `id` of `table` until the transaction ends and throws 412 unless it meets `expectation`. */
export async function lockExpected(tx: Transaction, table: VersionedTable, id: number, what: string, expectation: Expectation): Promise<void> {
  // `table` is one of two literals, never input.
  const [row] = await tx.$queryRawUnsafe<{ version: number }[]>(`SELECT version FROM ${table} WHERE id = $1 FOR UPDATE`, id);
  if (!row) throw preconditionFailed(what, undefined);
  if (expectation !== 'exists' && !expectation.versions.includes(row.version)) throw preconditionFailed(what, row.version);
}
