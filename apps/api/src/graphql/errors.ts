// Turns errors thrown by resolvers into spec-shaped GraphQL errors with `extensions.code`.
import { isDatabaseUnavailableError } from '@users-posts/db';
import { GraphQLError } from 'graphql';
import { createGraphQLError } from 'graphql-yoga';
import { AppError } from '../errors.js';

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
    return createGraphQLError(original.message, {
      ...location,
      extensions: {
        code: original.kind.graphqlCode,
        ...(original.fields ? { fields: original.fields } : {}),
      },
    });
  }
  // GraphQL's own errors (syntax, validation, variable coercion) are safe to show as they are.
  if (graphqlError && (!graphqlError.originalError || graphqlError.originalError instanceof GraphQLError)) {
    return graphqlError.extensions.code
      ? graphqlError
      : createGraphQLError(graphqlError.message, { ...location, extensions: { ...graphqlError.extensions, code: 'BAD_USER_INPUT' } });
  }
  return createGraphQLError(isDev && original instanceof Error ? original.message : message, {
    ...location,
    extensions: { code: 'INTERNAL_SERVER_ERROR' },
  });
}
