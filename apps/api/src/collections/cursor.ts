// Opaque keyset cursors: the full sort tuple (field, direction, value, id), so pages never skip or repeat.
import { AppError } from '../errors.js';
import type { SortDirection } from './query.js';

interface CursorPayload {
  f: string;
  d: SortDirection;
  v: string | number | null;
  id: number;
}

export type CursorValue = string | number | Date | null;

const invalid = (message: string): AppError =>
  new AppError('BAD_QUERY_PARAMETER', `Invalid cursor: ${message}`, [{ field: 'cursor', message }]);

export function encodeCursor(field: string, direction: SortDirection, value: CursorValue, id: number): string {
  const payload: CursorPayload = { f: field, d: direction, v: value instanceof Date ? value.toISOString() : value, id };
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

/** Decodes a cursor issued for this same sort, or throws 400 naming `cursor`. */
export function decodeCursor(cursor: string, field: string, direction: SortDirection): CursorPayload {
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid('malformed');
  }
  const candidate = payload as Partial<CursorPayload> | null;
  if (
    !candidate ||
    typeof candidate !== 'object' ||
    typeof candidate.f !== 'string' ||
    (candidate.d !== 'asc' && candidate.d !== 'desc') ||
    !Number.isSafeInteger(candidate.id) ||
    !['string', 'number'].includes(typeof candidate.v) && candidate.v !== null
  ) {
    throw invalid('malformed');
  }
  if (candidate.f !== field || candidate.d !== direction) throw invalid('it was issued for another sort order');
  return candidate as CursorPayload;
}
