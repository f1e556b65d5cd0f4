// Opaque keyset cursors: the full sort tuple (field, direction, value, id) plus a fingerprint of the listing that issued
// them (collection, sort, filters, search), so pages never skip or repeat and a cursor is refused anywhere else (SPEC §4).
import { createHash } from 'node:crypto';
import { AppError } from '../errors/app-error.js';
import { isStorableText } from '../contract/text.js';
import type { SortDirection } from './query.js';

interface CursorPayload {
  f: string;
  d: SortDirection;
  v: string | number | null;
  id: number;
  /** Fingerprint of the listing (see `cursorScope`). */
  s: string;
}

export type CursorValue = string | number | Date | null;

/** What a sort field's cursor value must be: checked before it reaches a query (a wrong type was a 500). */
export type CursorKind = 'id' | 'integer' | 'string' | 'date' | readonly string[];

/** The listing a cursor belongs to: its collection, sort and filters (the Prisma `where`, which holds search too). */
export interface CursorScope {
  collection: string;
  field: string;
  direction: SortDirection;
  filters: unknown;
}

const MAX_ID = 2_147_483_647; // ids and integer sort columns are PostgreSQL `integer`
const MAX_STRING = 1_000; // longer than any sortable column (name 100, email 254, title 200)

const invalid = (message: string, parameter: string): AppError =>
  new AppError('BAD_QUERY_PARAMETER', `Invalid ${parameter}: ${message}`, [{ field: parameter, message }]);

/**
 * A short hash of the listing. Not a signature (the algorithm is public): it binds a cursor to where it was issued so
 * honest mistakes (a `/posts` cursor on `/users`, another filter) are 400s; forged values are caught by the type checks.
 */
function fingerprint(scope: CursorScope): string {
  const text = JSON.stringify([scope.collection, scope.field, scope.direction, scope.filters ?? null]);
  return createHash('sha256').update(text).digest('base64url').slice(0, 16);
}

export function encodeCursor(scope: CursorScope, value: CursorValue, id: number): string {
  const payload: CursorPayload = {
    f: scope.field,
    d: scope.direction,
    v: value instanceof Date ? value.toISOString() : value,
    id,
    s: fingerprint(scope),
  };
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

/**
 * A real instant: Date.parse takes 2024-02-30 and 24:00:00 and rolls them over (to 1 March, the next day), which
 * PostgreSQL refuses; such a value must not reach a query. The date and time must read back unchanged.
 */
function isCalendarInstant(value: string): boolean {
  const time = Date.parse(value);
  return !Number.isNaN(time) && new Date(time).toISOString().slice(0, 19) === value.slice(0, 19);
}

function valueFits(value: unknown, kind: CursorKind, nullable: boolean): boolean {
  if (value === null) return nullable;
  if (kind === 'id') return true; // the id sort reads only `id`
  if (kind === 'integer') return Number.isSafeInteger(value) && Math.abs(value as number) <= MAX_ID;
  if (typeof value !== 'string' || value.length > MAX_STRING || !isStorableText(value)) return false;
  // Only the ISO-8601 form the cursor was issued with, years 0001–9999: PostgreSQL has no year -100000 (a 500 otherwise).
  if (kind === 'date')
    return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/.test(value) && !value.startsWith('0000') && isCalendarInstant(value);
  if (kind === 'string') return true;
  return kind.includes(value);
}

/** Decodes a cursor issued for this same listing, or throws 400 naming `parameter` (`cursor`; `after` in GraphQL). */
export function decodeCursor(
  cursor: string,
  scope: CursorScope,
  options: { kind?: CursorKind; nullable?: boolean; parameter?: string } = {},
): { value: string | number | null; id: number } {
  const parameter = options.parameter ?? 'cursor';
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid('malformed', parameter);
  }
  const candidate = payload as Partial<CursorPayload> | null;
  if (
    !candidate ||
    typeof candidate !== 'object' ||
    Array.isArray(candidate) ||
    typeof candidate.f !== 'string' ||
    (candidate.d !== 'asc' && candidate.d !== 'desc') ||
    typeof candidate.s !== 'string' ||
    !Number.isSafeInteger(candidate.id) ||
    (candidate.id as number) < 0 ||
    (candidate.id as number) > MAX_ID
  ) {
    throw invalid('malformed', parameter);
  }
  if (candidate.f !== scope.field || candidate.d !== scope.direction) throw invalid('it was issued for another sort order', parameter);
  if (candidate.s !== fingerprint(scope)) throw invalid('it was issued for another collection, filter or search', parameter);
  const kind = options.kind ?? (scope.field === 'id' ? 'id' : 'string');
  if (!valueFits(candidate.v, kind, options.nullable ?? false)) throw invalid(`its value is not a valid ${scope.field}`, parameter);
  return { value: candidate.v ?? null, id: candidate.id as number };
}
