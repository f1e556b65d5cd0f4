// Turns errors thrown by resolvers into spec-shaped GraphQL errors with `extensions.code`.
import { isDatabaseUnavailableError } from '@users-posts/db';
import { GraphQLError } from 'graphql';
import { createGraphQLError } from 'graphql-yoga';
import { AppError, ErrorKinds } from '../errors.js';
import { PERSISTED_DOCUMENT_CODES } from './persisted-documents.js';

/** The `extensions.code` values of SPEC §2, and the persisted documents' refusals (the codes their clients act on). */
const SPEC_CODES = new Set<unknown>([
  ...Object.values(ErrorKinds).map((kind) => kind.graphqlCode),
  'QUERY_TOO_COMPLEX',
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  ...Object.values(PERSISTED_DOCUMENT_CODES),
]);

function originalOf(error: unknown): unknown {
  return error instanceof GraphQLError && error.originalError ? originalOf(error.originalError) : error;
}

/** An application error as such, or the database's absence (any driver shape) as the UNAVAILABLE one. */
function appErrorOf(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error;
  return isDatabaseUnavailableError(error) ? new AppError('UNAVAILABLE', 'Database unavailable') : undefined;
}

/**
 * Yoga `maskError`: application errors keep their message and carry their code (and failing fields), and so does
 * an unreachable database ("Database unavailable"); anything else becomes INTERNAL_SERVER_ERROR, with the message
 * only outside production.
 */
export function maskError(error: unknown, message: string, isDev = false): Error {
  const original = appErrorOf(originalOf(error)) ?? originalOf(error);
  const graphqlError = error instanceof GraphQLError ? error : undefined;
  const location = { nodes: graphqlError?.nodes, path: graphqlError?.path, source: graphqlError?.source };
  if (original instanceof AppError) {
    const extensions = {
      code: original.kind.graphqlCode,
      ...(original.fields ? { fields: original.fields } : {}),
      // a refused `expectedVersion`: the version found, to read again or decide
      ...(original.currentVersion !== undefined ? { currentVersion: original.currentVersion } : {}),
    };
    // In place when it is already a GraphQL error (see below: a replaced error is logged as a server error).
    if (graphqlError && graphqlError.message === original.message) {
      Object.assign(graphqlError.extensions, extensions);
      return graphqlError;
    }
    return createGraphQLError(original.message, { ...location, extensions });
  }
  // GraphQL's own errors (syntax, validation, variable coercion) are safe to show as they are. Those without a code, or
  // with one outside SPEC §2 (Yoga's OPERATION_RESOLUTION_FAILURE for an operationName that picks no operation,
  // BAD_REQUEST for a mutation over GET), are the client's input: BAD_USER_INPUT. Recoded in place, as limits.ts does,
  // because Yoga logs every error that masking replaces as a server error.
  if (graphqlError && (!graphqlError.originalError || graphqlError.originalError instanceof GraphQLError)) {
    if (!SPEC_CODES.has(graphqlError.extensions.code)) Object.assign(graphqlError.extensions, { code: 'BAD_USER_INPUT' });
    return graphqlError;
  }
  return createGraphQLError(isDev && original instanceof Error ? original.message : message, {
    ...location,
    extensions: { code: 'INTERNAL_SERVER_ERROR' },
  });
}
