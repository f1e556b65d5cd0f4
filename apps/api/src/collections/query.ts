// Parses the collection conventions of SPEC §4 (paging mode, sort syntaxes, fields, search) once for every list.
import { AppError } from '../errors/app-error.js';
import { isStorableText } from '../contract/text.js';
import { beyondOffsetWindow, DEFAULT_COLLECTION_LIMITS, type CollectionLimits } from '../config/collection-limits.js';

export const DEFAULT_PAGE_SIZE = 20;
export { PAGE_SIZE_MAX as MAX_PAGE_SIZE } from '@users-posts/contracts';

export type SortDirection = 'asc' | 'desc';

export type Paging =
  | { mode: 'page'; page: number; pageSize: number }
  | { mode: 'offset'; offset: number; limit: number }
  | { mode: 'cursor'; cursor: string | undefined; limit: number };

export interface CollectionQuery<Field extends string = string> {
  paging: Paging;
  sort: { field: Field; direction: SortDirection };
  /** Fields to keep in each item (always with `id`); undefined keeps every field. */
  fields: string[] | undefined;
  /**
   * Case-insensitive substring to search for, as a LIKE literal (`%`, `_` and `\` escaped: `q=100%` once matched
   * "1000", `q=%` everything); collections/page.ts puts it between `%`s.
   */
  search: string | undefined;
}

/** The raw query parameters the contract declares for every collection (already type-checked by it). */
export interface CollectionParams {
  page?: number;
  pageSize?: number;
  size?: number;
  offset?: number;
  limit?: number;
  cursor?: string;
  sort?: string;
  order?: SortDirection;
  sortBy?: string;
  fields?: string;
  q?: string;
  search?: string;
}

export interface CollectionRules<Field extends string> {
  /** Fields that may be sorted on (SPEC §4 allow-lists). */
  sortable: readonly Field[];
  /** Fields that exist in the representation (for `fields=`). */
  selectable: readonly string[];
}

const badParameter = (parameter: string, message: string): AppError =>
  new AppError('BAD_QUERY_PARAMETER', `Invalid ${parameter}: ${message}`, [{ field: parameter, message }]);

/**
 * `page` and `offset` have no upper bound in the contract, so `1e400` arrived as Infinity (a 500: the page number
 * could not be answered). A finite one beyond the offset window is refused by parsePaging.
 */
function position(params: CollectionParams, name: 'page' | 'offset'): void {
  const value = params[name];
  if (value !== undefined && !Number.isFinite(value)) throw badParameter(name, 'must be a finite integer');
}

function parsePaging(params: CollectionParams, limits: CollectionLimits): Paging {
  position(params, 'page');
  position(params, 'offset');
  if (params.cursor !== undefined) {
    return { mode: 'cursor', cursor: params.cursor || undefined, limit: params.limit ?? DEFAULT_PAGE_SIZE };
  }
  // SPEC §4 "At scale": OFFSET reads every row it skips, so pages skip at most MAX_OFFSET rows; cursors go deeper.
  if (params.offset !== undefined || params.limit !== undefined) {
    const offset = params.offset ?? 0;
    if (offset > limits.maxOffset) throw badParameter('offset', beyondOffsetWindow(limits));
    return { mode: 'offset', offset, limit: params.limit ?? DEFAULT_PAGE_SIZE };
  }
  const page = params.page ?? 1;
  const pageSize = params.pageSize ?? params.size ?? DEFAULT_PAGE_SIZE;
  if ((page - 1) * pageSize > limits.maxOffset) throw badParameter('page', beyondOffsetWindow(limits));
  return { mode: 'page', page, pageSize };
}

function parseSort<Field extends string>(params: CollectionParams, sortable: readonly Field[]): CollectionQuery<Field>['sort'] {
  let parameter = 'sort';
  let field: string | undefined;
  let direction: string = params.order ?? 'asc';
  if (params.sortBy !== undefined) {
    parameter = 'sortBy';
    field = params.sortBy.startsWith('-') ? params.sortBy.slice(1) : params.sortBy;
    direction = params.sortBy.startsWith('-') ? 'desc' : 'asc';
  } else if (params.sort !== undefined) {
    const [name, suffix, ...rest] = params.sort.split(',');
    if (rest.length) throw badParameter('sort', 'expected `field` or `field,asc|desc`');
    field = name?.startsWith('-') ? name.slice(1) : name;
    if (name?.startsWith('-')) direction = 'desc';
    if (suffix !== undefined) direction = suffix.trim().toLowerCase();
  }
  if (field === undefined) return { field: 'id' as Field, direction: direction as SortDirection };
  field = field.trim();
  if (!sortable.includes(field as Field)) {
    throw badParameter(parameter, `cannot sort by \`${field}\`; allowed: ${sortable.join(', ')}`);
  }
  if (direction !== 'asc' && direction !== 'desc') throw badParameter(parameter, 'direction must be asc or desc');
  return { field: field as Field, direction };
}

function parseFields(value: string | undefined, selectable: readonly string[]): string[] | undefined {
  if (value === undefined) return undefined;
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !selectable.includes(name));
  if (unknown.length) throw badParameter('fields', `unknown field(s) ${unknown.join(', ')}; allowed: ${selectable.join(', ')}`);
  return [...new Set(['id', ...names])];
}

/** `text` as a LIKE pattern matching itself: `\`, `%` and `_` escaped with PostgreSQL's default escape `\`. */
export function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

export function parseCollectionQuery<Field extends string>(
  params: CollectionParams,
  rules: CollectionRules<Field>,
  limits: CollectionLimits = DEFAULT_COLLECTION_LIMITS,
): CollectionQuery<Field> {
  const search = (params.q ?? params.search)?.trim();
  if (search !== undefined && !isStorableText(search)) {
    throw badParameter(params.q !== undefined ? 'q' : 'search', 'must not contain NUL characters or unpaired surrogates');
  }
  return {
    paging: parsePaging(params, limits),
    sort: parseSort(params, rules.sortable),
    fields: parseFields(params.fields, rules.selectable),
    search: search ? likeLiteral(search) : undefined,
  };
}

/** Keeps only the selected fields of a representation (`id` always stays). */
export function selectFields<T extends { id: number }>(item: T, fields: string[] | undefined): Partial<T> & Pick<T, 'id'> {
  if (!fields) return item;
  return Object.fromEntries(Object.entries(item).filter(([key]) => key === 'id' || fields.includes(key))) as Partial<T> & Pick<T, 'id'>;
}
