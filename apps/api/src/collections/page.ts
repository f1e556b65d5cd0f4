// Runs a parsed collection query against one Prisma model: ordering, keyset cursors, totals.
import type { CollectionQuery, SortDirection } from './query.js';
import { decodeCursor, encodeCursor, type CursorKind, type CursorScope, type CursorValue } from './cursor.js';

/** The two calls of a Prisma model delegate a page needs (kept loose: one helper serves every model). */
export interface PageableModel<Row> {
  findMany(args: object): Promise<Row[]>;
  count(args: object): Promise<number>;
}

export type PageResult<Row> =
  | { mode: 'page'; items: Row[]; total: number; page: number; pageSize: number; totalPages: number }
  | { mode: 'cursor'; items: Row[]; nextCursor: string | null; hasMore: boolean };

export interface PageOptions {
  /** The collection's name, so its cursors are refused by every other listing (SPEC §4). */
  collection: string;
  where: object;
  /** Sort fields whose column can be NULL (sorted last in both directions). */
  nullable?: readonly string[];
  /** Fields holding dates, so cursor values are turned back into Date objects. */
  dates?: readonly string[];
  /** Fields holding integers, and enum fields with their values (other fields are text): cursor values are checked. */
  integers?: readonly string[];
  enums?: Readonly<Record<string, readonly string[]>>;
}

function cursorKind(field: string, options: PageOptions): CursorKind {
  if (field === 'id') return 'id';
  if (options.dates?.includes(field)) return 'date';
  if (options.integers?.includes(field)) return 'integer';
  return options.enums?.[field] ?? 'string';
}

function orderBy(field: string, direction: SortDirection, nullable: boolean): object[] {
  const primary = nullable ? { [field]: { sort: direction, nulls: 'last' } } : { [field]: direction };
  return field === 'id' ? [{ id: direction }] : [primary, { id: direction }];
}

/** Rows strictly after (field = value, id) in the given order; NULLs of a nullable field sort last. */
function after(field: string, direction: SortDirection, value: CursorValue, id: number, nullable: boolean): object {
  const beyond = direction === 'asc' ? 'gt' : 'lt';
  if (field === 'id') return { id: { [beyond]: id } };
  if (value === null) return { [field]: null, id: { [beyond]: id } };
  const later = [{ [field]: { [beyond]: value } }, { [field]: value, id: { [beyond]: id } }];
  return { OR: nullable ? [...later, { [field]: null }] : later };
}

export async function findPage<Row extends { id: number }>(
  model: PageableModel<Row>,
  query: CollectionQuery,
  options: PageOptions,
): Promise<PageResult<Row>> {
  const { field, direction } = query.sort;
  const nullable = options.nullable?.includes(field) ?? false;
  const order = orderBy(field, direction, nullable);
  const { paging } = query;

  if (paging.mode === 'cursor') {
    // The `where` holds the filters and the search, so it is the listing's identity together with collection and sort.
    const scope: CursorScope = { collection: options.collection, field, direction, filters: options.where };
    let where = options.where;
    if (paging.cursor) {
      const position = decodeCursor(paging.cursor, scope, { kind: cursorKind(field, options), nullable });
      const value = position.value !== null && options.dates?.includes(field) ? new Date(position.value) : position.value;
      where = { AND: [options.where, after(field, direction, value, position.id, nullable)] };
    }
    const rows = await model.findMany({ where, orderBy: order, take: paging.limit + 1 });
    const hasMore = rows.length > paging.limit;
    const items = rows.slice(0, paging.limit);
    const last = items.at(-1);
    const nextCursor =
      hasMore && last ? encodeCursor(scope, (last as Record<string, unknown>)[field] as CursorValue, last.id) : null;
    return { mode: 'cursor', items, nextCursor, hasMore };
  }

  const [skip, take] = paging.mode === 'page' ? [(paging.page - 1) * paging.pageSize, paging.pageSize] : [paging.offset, paging.limit];
  const [items, total] = await Promise.all([
    // A page or offset past any possible row is past the end: an empty page, not a database error (OFFSET is a 64-bit
    // integer; `?page=99999999999999999999999` asked for a skip of 2e24).
    model.findMany({ where: options.where, orderBy: order, skip: Math.min(skip, Number.MAX_SAFE_INTEGER), take }),
    model.count({ where: options.where }),
  ]);
  const page = paging.mode === 'page' ? paging.page : Math.floor(paging.offset / paging.limit) + 1;
  return { mode: 'page', items, total, page, pageSize: take, totalPages: Math.ceil(total / take) };
}
