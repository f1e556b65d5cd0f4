// Runs a parsed collection query against one table through the SQL reader: filters, search, ordering, keyset cursors, totals.
//
// Why SQL and not the Prisma client: a page is the hottest REST read, and Prisma 7's client plans, interprets and maps
// every findMany/count on the main thread (~55 % of a page request's CPU, docs/performance.md). The
// statements are built here from fixed fragments (table, columns, operators) and numbered parameters only: no value
// of a request is ever part of the SQL text. Written by hand: no kept library speaks the driver adapter.
import { PREPARED, type SqlArg, type SqlReader } from '@users-posts/db';
import type { CollectionQuery, SortDirection } from './query.js';
import { decodeCursor, encodeCursor, type CursorKind, type CursorScope, type CursorValue } from './cursor.js';

/** A sortable or filterable field of a collection, as its column. */
export interface PageField {
  /** The column's SQL name (`created_at`). */
  column: string;
  /** What its cursor values must be (checked before a query runs). */
  kind: CursorKind;
  /** The column can be NULL: such rows sort last in both directions. */
  nullable?: boolean;
  /** The SQL type a parameter compared with the column is cast to (`timestamp(3)`, `"OrderStatus"`), when not text or int. */
  cast?: string;
}

/** The two fields every collection has: its id, and the creation time (`timestamp(3)`, as Prisma declares it). */
export const ID_FIELD: PageField = { column: 'id', kind: 'id' };
export const CREATED_AT_FIELD: PageField = { column: 'created_at', kind: 'date', cast: 'timestamp(3)' };

/** One collection's table, as the pager reads it. */
export interface PageSource<Field extends string = string> {
  /** The collection's name, so its cursors are refused by every other listing (SPEC §4). */
  collection: string;
  table: string;
  /** The SELECT list, aliased to the model's field names (the same objects the Prisma client returns). */
  columns: string;
  /** Every field a listing sorts, filters or searches by. */
  fields: Readonly<Record<Field | 'id', PageField>>;
}

/** What one listing selects: equality filters (undefined = not filtered) and the fields its search looks in. */
export interface PageFilter<Field extends string = string> {
  equal?: Partial<Record<Field, string | number | undefined>>;
  searchIn?: readonly Field[];
}

export type PageResult<Row> =
  | { mode: 'page'; items: Row[]; total: number; page: number; pageSize: number; totalPages: number }
  | { mode: 'cursor'; items: Row[]; nextCursor: string | null; hasMore: boolean };

/** A table has at most 2^31 − 1 rows (ids are PostgreSQL `integer`): any skip beyond that is past the end. */
const MAX_SKIP = 2_147_483_647;

/** A WHERE clause under construction: SQL fragments and their numbered parameters. */
class Conditions {
  readonly parts: string[] = [];
  readonly args: SqlArg[] = [];

  /** `$n` for a new parameter, cast to the field's type when it has one. */
  param(value: SqlArg, field?: PageField): string {
    this.args.push(value);
    return field?.cast ? `$${this.args.length}::${field.cast}` : `$${this.args.length}`;
  }

  get sql(): string {
    return this.parts.length ? ` WHERE ${this.parts.join(' AND ')}` : '';
  }
}

function fieldOf(source: PageSource, name: string): PageField {
  const field = (source.fields as Record<string, PageField | undefined>)[name];
  // Sort and filter fields come from the contract's allow-lists, never from free text: this is a programming error.
  if (!field) throw new Error(`${source.collection} has no field ${name}`);
  return field;
}

/** Filters and search as conditions; also the listing's identity for its cursors. */
function filterConditions(source: PageSource, filter: PageFilter, search: string | undefined): { where: Conditions; identity: unknown } {
  const where = new Conditions();
  const equal: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(filter.equal ?? {})) {
    if (value === undefined) continue;
    const field = fieldOf(source, name);
    equal[name] = value as string | number;
    where.parts.push(`${field.column} = ${where.param(value as string | number, field)}`);
  }
  if (search && filter.searchIn?.length) {
    // `search` is already a LIKE literal (collections/query.ts escapes `\`, `%` and `_`), and `\` is ILIKE's escape.
    const pattern = where.param(`%${search}%`);
    where.parts.push(`(${filter.searchIn.map((name) => `${fieldOf(source, name).column} ILIKE ${pattern}`).join(' OR ')})`);
  }
  return { where, identity: { equal, search: filter.searchIn?.length ? (search ?? null) : null } };
}

function orderBy(field: PageField, direction: SortDirection): string {
  const dir = direction === 'asc' ? 'ASC' : 'DESC';
  if (field.column === 'id') return `id ${dir}`;
  return `${field.column} ${dir}${field.nullable ? ' NULLS LAST' : ''}, id ${dir}`;
}

/** Rows strictly after (field = value, id) in the given order; NULLs of a nullable field sort last. */
function after(where: Conditions, field: PageField, direction: SortDirection, value: CursorValue, id: number): string {
  const beyond = direction === 'asc' ? '>' : '<';
  const idAfter = `id ${beyond} ${where.param(id)}`;
  if (field.column === 'id') return idAfter;
  if (value === null) return `(${field.column} IS NULL AND ${idAfter})`;
  // A date goes as the millisecond instant the cursor was issued from (timestamp(3) would round extra digits up).
  const at = where.param(value instanceof Date || field.kind === 'date' ? new Date(value).toISOString() : value, field);
  const later = `${field.column} ${beyond} ${at} OR (${field.column} = ${at} AND ${idAfter})`;
  return `(${later}${field.nullable ? ` OR ${field.column} IS NULL` : ''})`;
}

export async function findPage<Row extends { id: number }>(
  sql: SqlReader,
  source: PageSource,
  query: CollectionQuery,
  filter: PageFilter = {},
): Promise<PageResult<Row>> {
  const sortName = query.sort.field;
  const { direction } = query.sort;
  const field = fieldOf(source, sortName);
  const { where, identity } = filterConditions(source, filter, query.search);
  const select = `SELECT ${source.columns} FROM ${source.table}`;
  const order = ` ORDER BY ${orderBy(field, direction)}`;
  const { paging } = query;

  if (paging.mode === 'cursor') {
    // The filters and the search are the listing's identity together with collection and sort.
    const scope: CursorScope = { collection: source.collection, field: sortName, direction, filters: identity };
    if (paging.cursor) {
      const position = decodeCursor(paging.cursor, scope, { kind: field.kind, nullable: field.nullable ?? false });
      where.parts.push(after(where, field, direction, position.value, position.id));
    }
    const rows = await sql.rows<Row>(`${select}${where.sql}${order} LIMIT ${where.param(paging.limit + 1)}`, where.args);
    const hasMore = rows.length > paging.limit;
    const items = rows.slice(0, paging.limit);
    const last = items.at(-1);
    const nextCursor = hasMore && last ? encodeCursor(scope, (last as unknown as Record<string, CursorValue>)[sortName] ?? null, last.id) : null;
    return { mode: 'cursor', items, nextCursor, hasMore };
  }

  const [skip, take] = paging.mode === 'page' ? [(paging.page - 1) * paging.pageSize, paging.pageSize] : [paging.offset, paging.limit];
  const countArgs = [...where.args];
  const countSql = `SELECT count(*)::int AS total FROM ${source.table}${where.sql}`;
  // A page or offset past any possible row is past the end: an empty page, not a database error
  // (`?page=99999999999999999999999` asked for a skip of 2e24).
  const pageSql = `${select}${where.sql}${order} LIMIT ${where.param(take)} OFFSET ${where.param(Math.min(skip, MAX_SKIP))}`;
  // An unfiltered numbered page is prepared (a text per sort and direction); a filtered one or a cursor page is not, so
  // what a client chooses cannot multiply the texts every connection keeps (sql-reader.ts StatementNames).
  const options = where.parts.length === 0 ? PREPARED : undefined;
  const [items, [counted]] = await Promise.all([
    sql.rows<Row>(pageSql, where.args, options),
    sql.rows<{ total: number }>(countSql, countArgs, options),
  ]);
  const total = counted?.total ?? 0;
  const page = paging.mode === 'page' ? paging.page : Math.floor(paging.offset / paging.limit) + 1;
  return { mode: 'page', items, total, page, pageSize: take, totalPages: Math.ceil(total / take) };
}
