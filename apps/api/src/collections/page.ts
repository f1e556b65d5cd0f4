// Runs a parsed collection query against one table through the SQL reader: filters, search, ordering, keyset cursors,
// totals; each of them an index range at any table size (SPEC §4 "At scale"; test/rest/index-paths.test.ts proves it).
//
// Why SQL and not the Prisma client: a page is the hottest REST read, and Prisma 7's client plans, interprets and maps
// every findMany/count on the main thread (~55 % of a page request's CPU, docs/performance.md). The
// statements are built here from fixed fragments (table, columns, operators) and numbered parameters only: no value
// of a request is ever part of the SQL text. Written by hand: no kept library speaks the driver adapter.
import { PREPARED, type ReadOptions, type SqlArg, type SqlReader } from '@users-posts/db';
import { DEFAULT_COLLECTION_LIMITS, type CollectionLimits } from '../config/collection-limits.js';
import { countedRows, type CountedTable } from './row-counts.js';
import { columnSamples, probePattern } from './search-probe.js';
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
  /** The table's rows are counted by the writes (services/row-counts.ts): an unfiltered `total` is read from there. */
  counted?: CountedTable;
  /**
   * A search of exactly these fields looks in one trigram index on `expression` (their text joined), not in one index
   * per field: each trigram's posting list is read once. Each row found is then checked field by field.
   */
  searchText?: { fields: readonly Field[]; expression: string };
}

/** What one listing selects: equality filters (undefined = not filtered) and the fields its search looks in. */
export interface PageFilter<Field extends string = string> {
  equal?: Partial<Record<Field, string | number | undefined>>;
  searchIn?: readonly Field[];
}

export type PageResult<Row> =
  | { mode: 'page'; items: Row[]; total: number; page: number; pageSize: number; totalPages: number; totalExact: boolean }
  | { mode: 'cursor'; items: Row[]; nextCursor: string | null; hasMore: boolean };

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

/**
 * Filters and search as conditions; also the listing's identity for its cursors. `probe` is what the search's trigram
 * indexes look up (search-probe.ts) when it is not the whole term; each row they find is then checked against the whole
 * term, on an expression the indexes do not answer (`column || ''`, or the fields one by one under `searchText`).
 */
function filterConditions(
  source: PageSource,
  filter: PageFilter,
  search: string | undefined,
  probe?: string,
): { where: Conditions; identity: unknown } {
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
    const whole = `%${search}%`;
    const pattern = where.param(whole);
    // Without statistics, a several-word term is looked up by its longest word (the likeliest to be rare): given the
    // whole term, the index would also read the posting lists of the common words ("Post 1234567" in 10 M titles that
    // all say "Post": 12 500 index pages instead of 120).
    const lookup = probe ?? `%${search.split(/\s+/).reduce((a, b) => (b.length > a.length ? b : a))}%`;
    const columns = filter.searchIn.map((name) => fieldOf(source, name).column);
    const anyColumn = (test: (column: string) => string) => `(${columns.map(test).join(' OR ')})`;
    const holdsTerm = (column: string) => `${column} ILIKE ${pattern}`;
    const joined = source.searchText;
    if (joined && sameFields(joined.fields, filter.searchIn)) {
      // The joined text may match across the join: the fields are checked one by one (`lookup` is never the answer).
      where.parts.push(`${joined.expression} ILIKE ${where.param(lookup)}`, anyColumn(holdsTerm));
    } else if (lookup === whole) {
      where.parts.push(anyColumn(holdsTerm));
    } else {
      const looked = where.param(lookup);
      where.parts.push(anyColumn((column) => `(${column} ILIKE ${looked} AND (${column} || '') ILIKE ${pattern})`));
    }
  }
  return { where, identity: { equal, search: filter.searchIn?.length ? (search ?? null) : null } };
}

function sameFields(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((field) => b.includes(field));
}

/** The ORDER BY of a listing: by column in a plain statement, by output name over a fenced one (see `Statement`). */
interface Order {
  column: string;
  output: string;
}

function orderOf(field: PageField, name: string, direction: SortDirection, nullsLast = field.nullable ?? false): Order {
  const dir = direction === 'asc' ? 'ASC' : 'DESC';
  if (field.column === 'id') return { column: `id ${dir}`, output: `id ${dir}` };
  const nulls = nullsLast ? ' NULLS LAST' : '';
  return { column: `${field.column} ${dir}${nulls}, id ${dir}`, output: `"${name}" ${dir}${nulls}, id ${dir}` };
}

/**
 * How one listing's statements are written. A plain statement lets PostgreSQL walk the index of the sort and stop after
 * a page. A fenced one (`fenced`: a selective search or filter) first finds the matches through the indexes of the
 * search or the filters in a subquery the planner cannot merge (`OFFSET 0`), then sorts those few. Walking the sort's
 * index and testing each row is what the planner picks when it guesses a few thousand matches spread evenly, and it
 * reads the whole table when there are none (`q=zzz` on 10 M posts: 12 s) or when they all sort last (`?role=ADMIN&
 * sort=age` where every ADMIN's age is NULL: 900 000 rows read, 350 ms).
 */
interface Statement {
  select: string;
  fenced: boolean;
}

/** The text of one statement: `tail` (LIMIT/OFFSET) is written after the conditions, so its parameters number after theirs. */
function text(statement: Statement, where: Conditions, order: Order, tail: (where: Conditions) => string, withTotal = false): string {
  if (!statement.fenced) return `${statement.select}${where.sql} ORDER BY ${order.column}${tail(where)}`;
  const total = withTotal ? `, count(*) OVER () AS "${TOTAL_MATCHES}"` : '';
  return `SELECT *${total} FROM (${statement.select}${where.sql} OFFSET 0) AS matched ORDER BY ${order.output}${tail(where)}`;
}

/** The column a fenced page carries its number of matches in (removed before the rows leave). */
const TOTAL_MATCHES = '$totalMatches';

/**
 * Rows strictly after (value, id) in the given order, as one range of the index on (field, id): a row comparison, not
 * `a > x OR (a = x AND id > y)`, so PostgreSQL starts the index scan at (x, y) instead of reading the index from its
 * first entry, and the thousandth page costs what the first does. `value` is not NULL (see nullableCursorRows).
 */
function after(where: Conditions, field: PageField, direction: SortDirection, value: Exclude<CursorValue, null>, id: number): string {
  const beyond = direction === 'asc' ? '>' : '<';
  if (field.column === 'id') return `id ${beyond} ${where.param(id)}`;
  // A date goes as the millisecond instant the cursor was issued from (timestamp(3) would round extra digits up).
  const at = where.param(value instanceof Date || field.kind === 'date' ? new Date(value).toISOString() : value, field);
  return `(${field.column}, id) ${beyond} (${at}, ${where.param(id)})`;
}

/**
 * A nullable field's cursor page in two index ranges: the rows with a value after the cursor, then (when those run
 * out) the NULLs, which sort last. One `(range) OR IS NULL` condition would make PostgreSQL read the index from the
 * start; each of these two is a range of the index on (field, id).
 */
async function nullableCursorRows<Row>(
  sql: SqlReader,
  statement: Statement,
  base: Conditions,
  sort: { field: PageField; name: string; direction: SortDirection },
  take: number,
  position: { value: CursorValue; id: number } | undefined,
): Promise<Row[]> {
  const { field, name, direction } = sort;
  const rows: Row[] = [];
  const limit = (count: number) => (where: Conditions) => ` LIMIT ${where.param(count)}`;
  if (position?.value !== null) {
    const valued = cloneConditions(base);
    valued.parts.push(position ? after(valued, field, direction, position.value, position.id) : `${field.column} IS NOT NULL`);
    rows.push(...(await sql.rows<Row>(text(statement, valued, orderOf(field, name, direction, false), limit(take)), valued.args)));
    if (rows.length >= take) return rows;
  }
  const nulls = cloneConditions(base);
  nulls.parts.push(`${field.column} IS NULL`);
  if (position?.value === null) nulls.parts.push(`id ${direction === 'asc' ? '>' : '<'} ${nulls.param(position.id)}`);
  rows.push(...(await sql.rows<Row>(text(statement, nulls, orderOf(ID_FIELD, 'id', direction), limit(take - rows.length)), nulls.args)));
  return rows;
}

function cloneConditions(where: Conditions): Conditions {
  const copy = new Conditions();
  copy.parts.push(...where.parts);
  copy.args.push(...where.args);
  return copy;
}

/** The planner's estimate of how many rows match (EXPLAIN: the statistics PostgreSQL keeps; no row is read). */
async function estimatedRows(sql: SqlReader, table: string, where: Conditions): Promise<number> {
  type Plan = [{ Plan: { 'Plan Rows': number } }];
  const [row] = await sql.rows<{ 'QUERY PLAN': Plan | string }>(`EXPLAIN (FORMAT JSON) SELECT 1 FROM ${table}${where.sql}`, [...where.args]);
  // json arrives parsed from node-postgres, as text through the embedded database's bridge.
  const plan = typeof row?.['QUERY PLAN'] === 'string' ? (JSON.parse(row['QUERY PLAN']) as Plan) : row?.['QUERY PLAN'];
  return Math.round(plan?.[0]?.Plan['Plan Rows'] ?? 0);
}

/**
 * A search or filter the planner expects to match fewer rows than this is fenced (see `Statement`): its matches are
 * found through their indexes and sorted, at a cost that grows with the matches, not the table. A commoner one keeps
 * the plain statement, which finds a page of matches early in the sort's index.
 */
const SELECTIVE_ROWS = 10_000;

/**
 * How many rows match, at the cost of a page: counted exactly up to `limit` rows (a bounded count reads at most
 * limit + 1 index entries), else the planner's estimate of the whole, as PostgREST's `Prefer: count=estimated` does.
 * Never less than what the bounded count saw.
 */
async function countUpTo(sql: SqlReader, table: string, where: Conditions, limit: number, options: ReadOptions | undefined) {
  const bounded = cloneConditions(where);
  const text = `SELECT count(*)::int AS total FROM (SELECT 1 FROM ${table}${bounded.sql} LIMIT ${bounded.param(limit + 1)}) AS bounded`;
  const [counted] = await sql.rows<{ total: number }>(text, bounded.args, options);
  const total = counted?.total ?? 0;
  if (total <= limit) return { total, exact: true };
  const estimate = await estimatedRows(sql, table, where);
  return { total: Math.min(Math.max(estimate, total), MAX_TOTAL), exact: false };
}

/** `total` is a 32-bit integer in the contract. */
const MAX_TOTAL = 2_147_483_647;

export async function findPage<Row extends { id: number }>(
  sql: SqlReader,
  source: PageSource,
  query: CollectionQuery,
  filter: PageFilter = {},
  limits: CollectionLimits = DEFAULT_COLLECTION_LIMITS,
): Promise<PageResult<Row>> {
  const sortName = query.sort.field;
  const { direction } = query.sort;
  const field = fieldOf(source, sortName);
  const searched = query.search && filter.searchIn?.length ? filter.searchIn.map((name) => fieldOf(source, name).column) : [];
  const probe = searched.length ? probePattern(query.search!, await columnSamples(sql, source.table, searched)) : undefined;
  const { where, identity } = filterConditions(source, filter, query.search, probe);
  // A filter is fenced only where PostgreSQL has statistics of its columns: without them (a PGlite database nobody has
  // analysed) the planner guesses 0.5 % of the rows for any value, and `role=USER` (99 % of them) would be read whole.
  const filtered = Object.entries(filter.equal ?? {}).flatMap(([name, value]) => (value === undefined ? [] : [fieldOf(source, name).column]));
  const narrowed = searched.length > 0 || (filtered.length > 0 && (await columnSamples(sql, source.table, filtered)).length > 0);
  const statement: Statement = {
    select: `SELECT ${source.columns} FROM ${source.table}`,
    fenced: narrowed && (await estimatedRows(sql, source.table, where)) < SELECTIVE_ROWS,
  };
  const order = orderOf(field, sortName, direction);
  const { paging } = query;

  if (paging.mode === 'cursor') {
    // The filters and the search are the listing's identity together with collection and sort.
    const scope: CursorScope = { collection: source.collection, field: sortName, direction, filters: identity };
    const position = paging.cursor ? decodeCursor(paging.cursor, scope, { kind: field.kind, nullable: field.nullable ?? false }) : undefined;
    let rows: Row[];
    if (field.nullable) {
      rows = await nullableCursorRows<Row>(sql, statement, where, { field, name: sortName, direction }, paging.limit + 1, position);
    } else {
      if (position) where.parts.push(after(where, field, direction, position.value as Exclude<CursorValue, null>, position.id));
      rows = await sql.rows<Row>(
        text(statement, where, order, (w) => ` LIMIT ${w.param(paging.limit + 1)}`),
        where.args,
      );
    }
    const hasMore = rows.length > paging.limit;
    const items = rows.slice(0, paging.limit);
    const last = items.at(-1);
    const nextCursor = hasMore && last ? encodeCursor(scope, (last as unknown as Record<string, CursorValue>)[sortName] ?? null, last.id) : null;
    return { mode: 'cursor', items, nextCursor, hasMore };
  }

  const [skip, take] = paging.mode === 'page' ? [(paging.page - 1) * paging.pageSize, paging.pageSize] : [paging.offset, paging.limit];
  const page = paging.mode === 'page' ? paging.page : Math.floor(paging.offset / paging.limit) + 1;
  // Past the window only when called without the parser's check (a service's caller): an empty page, not an error.
  const window = (w: Conditions) => ` LIMIT ${w.param(take)} OFFSET ${w.param(Math.min(skip, MAX_TOTAL))}`;
  const result = (items: Row[], total: number, exact: boolean): PageResult<Row> => ({
    mode: 'page',
    items,
    total,
    page,
    pageSize: take,
    totalPages: Math.ceil(total / take),
    totalExact: exact,
  });

  if (statement.fenced) {
    // One pass over the matches gives the page and their number (a window count before the LIMIT).
    const counted = cloneConditions(where);
    const rows = await sql.rows<Row & { [TOTAL_MATCHES]?: number | string }>(text(statement, counted, order, window, true), counted.args);
    for (const row of rows.slice(1)) delete row[TOTAL_MATCHES];
    const first = rows[0];
    if (first) {
      const total = Number(first[TOTAL_MATCHES]);
      delete first[TOTAL_MATCHES];
      return result(rows, total, true);
    }
    // A page past the end has no row to carry the number: counted apart.
    const { total, exact } = skip > 0 ? await countUpTo(sql, source.table, where, limits.exactCountLimit, undefined) : { total: 0, exact: true };
    return result(rows, total, exact);
  }

  // An unfiltered numbered page is prepared (a text per sort and direction); a filtered one or a cursor page is not, so
  // what a client chooses cannot multiply the texts every connection keeps (sql-reader.ts StatementNames).
  const options = where.parts.length === 0 ? PREPARED : undefined;
  const counting =
    source.counted && where.parts.length === 0
      ? countedRows(sql, source.counted).then((total) => ({ total, exact: true }))
      : countUpTo(sql, source.table, where, limits.exactCountLimit, options);
  const paged = cloneConditions(where);
  const [items, { total, exact }] = await Promise.all([sql.rows<Row>(text(statement, paged, order, window), paged.args, options), counting]);
  return result(items, total, exact);
}
