// Validation of GraphQL arguments the schema types cannot express (ranges), as BAD_USER_INPUT errors.
import { PAGE_SIZE_MAX as MAX_PAGE } from '@users-posts/contracts';
import { AppError, type FieldError } from '../../errors/app-error.js';
import type { Window } from '../../services/users.js';
import { beyondOffsetWindow, type CollectionLimits } from '../../config/collection-limits.js';

/** Checks `limit` (1 to the contract's page size) and `offset` (0 to MAX_OFFSET: SPEC §4 "At scale") of a list field. */
export function windowArgs(args: { limit?: number | null; offset?: number | null }, limits: CollectionLimits): Window {
  const fields: FieldError[] = [];
  if (args.limit != null && (args.limit < 1 || args.limit > MAX_PAGE)) {
    fields.push({ field: 'limit', message: `must be between 1 and ${MAX_PAGE}` });
  }
  if (args.offset != null && args.offset < 0) fields.push({ field: 'offset', message: 'must be 0 or more' });
  if (args.offset != null && args.offset > limits.maxOffset) fields.push({ field: 'offset', message: beyondOffsetWindow(limits) });
  if (fields.length) throw new AppError('VALIDATION_FAILED', 'Invalid arguments', fields);
  return { limit: args.limit ?? undefined, offset: args.offset ?? undefined };
}
