// Optimistic concurrency for writes of one row: what the writer expects of it (REST `If-Match`, GraphQL
// `expectedVersion`), checked under the row's lock in the write's own transaction, so no other write slips between.
import type { PrismaClient } from '@users-posts/db';
import { AppError } from '../errors/app-error.js';

/**
 * A row's validator as one caller is shown it (SPEC §0.1): the version of its public fields, and, for a view that also
 * shows its private fields (a user's e-mail to that user, ADMINs and signed requests: SPEC §3.1), their version too.
 */
export interface Validator {
  readonly version: number;
  readonly privateVersion?: number | undefined;
}

/**
 * What a write expects of the row: that it merely exists (`If-Match: *`); that its public version is one of `versions`
 * (GraphQL's `expectedVersion`, the `version` field every caller reads; REST's If-Match of a public view); or that the
 * view with private fields is at one of `privateViews` (REST's If-Match from a caller shown that view: a change of the
 * e-mail since it was read is a change it did not see).
 */
export type Expectation = 'exists' | { readonly versions: readonly number[] } | { readonly privateViews: readonly Required<Validator>[] };

/** The tables whose rows carry a `version` (bumped by the database on every update that changes a shown field). */
type VersionedTable = 'users' | 'orders';
/** The tables whose rows also carry a `private_version` (the users trigger `bump_user_version` keeps it). */
const WITH_PRIVATE_VERSION: ReadonlySet<VersionedTable> = new Set(['users']);
type Transaction = Pick<PrismaClient, '$queryRawUnsafe'>;

/** 412: the row is gone, or at another validator than expected (then carried, for the ETag or `extensions`). */
export function preconditionFailed(what: string, current: Validator | undefined): AppError {
  return current === undefined
    ? new AppError('PRECONDITION_FAILED', `${what} does not exist`)
    : new AppError(
        'PRECONDITION_FAILED',
        `${what} has changed: it is now at version ${current.version}`,
        undefined,
        current.version,
        current.privateVersion,
      );
}

/** Locks row `id` of `table` until the transaction ends and throws 412 unless it meets `expectation`. */
export async function lockExpected(tx: Transaction, table: VersionedTable, id: number, what: string, expectation: Expectation): Promise<void> {
  const privateView = typeof expectation === 'object' && 'privateViews' in expectation;
  if (privateView && !WITH_PRIVATE_VERSION.has(table)) throw new Error(`${table} rows have no private view`);
  // `table` is one of two literals, never input.
  const columns = privateView ? 'version, private_version AS "privateVersion"' : 'version';
  const [row] = await tx.$queryRawUnsafe<Validator[]>(`SELECT ${columns} FROM ${table} WHERE id = $1 FOR UPDATE`, id);
  if (!row) throw preconditionFailed(what, undefined);
  if (expectation === 'exists') return;
  // The 412 names the validator of the view the expectation was made from: a public one never learns the private version.
  const met =
    'privateViews' in expectation
      ? expectation.privateViews.some((view) => view.version === row.version && view.privateVersion === row.privateVersion)
      : expectation.versions.includes(row.version);
  if (!met) throw preconditionFailed(what, row);
}
