// The GraphQL door's renderer of an AppError: `extensions.code` (and failing fields, the version found) on errors Yoga
// masks, and the `{errors: [...]}` body of answers written outside Yoga (refusals before or beside execution).
import { GraphQLError } from 'graphql';
import { createGraphQLError } from 'graphql-yoga';
import { AppError, clip, FIELD_MAX, GRAPHQL_CODES, MESSAGE_MAX } from '../../errors/app-error.js';
import { originalOf, toAppError } from '../../errors/to-app-error.js';
import { regularMediaType } from '../acceleration/http-fast-path.js';

/** What `extensions` carries for an application error. */
export function extensionsOf(error: AppError): Record<string, unknown> {
  // Bounded like REST's (rest/error-envelope.ts): a message or field may echo what a client sent.
  return {
    code: error.kind.graphqlCode,
    ...(error.kind.reason ? { reason: error.kind.reason } : {}),
    ...(error.fields
      ? { fields: error.fields.map((field) => ({ field: clip(field.field, FIELD_MAX), message: clip(field.message, MESSAGE_MAX) })) }
      : {}),
    // a refused `expectedVersion`: the version found, to read again or decide
    ...(error.currentVersion !== undefined ? { currentVersion: error.currentVersion } : {}),
  };
}

/** An application error as a GraphQL error, for results a plugin sets itself (a refused subscription). */
export function graphqlErrorOf(
  error: AppError,
  location: { nodes?: GraphQLError['nodes']; path?: GraphQLError['path']; source?: GraphQLError['source'] } = {},
): GraphQLError {
  return createGraphQLError(clip(error.message, MESSAGE_MAX), { ...location, extensions: extensionsOf(error) });
}

/**
 * The Content-Type of an error answered outside Yoga (401, 413, 415, 429, …): the one Yoga picks for this Accept, so a
 * client that accepts only `application/graphql-response+json` gets it (GraphQL over HTTP: such a client reads the body
 * of a non-2xx answer only in that type, and an Apollo error link would never see `extensions.code` otherwise).
 */
export function graphqlErrorMediaType(accept: string | undefined): string {
  return `${regularMediaType(accept) ?? 'application/json'}; charset=utf-8`;
}

/** The body of an error answered over HTTP outside Yoga: 406/415, the caps' 429, failures before GraphQL runs. */
export function graphqlErrorBody(error: AppError): { errors: Array<{ message: string; extensions: Record<string, unknown> }> } {
  return { errors: [{ message: clip(error.message, MESSAGE_MAX), extensions: extensionsOf(error) }] };
}

/**
 * Yoga `maskError`: application errors (and whatever toAppError recognises: an unreachable database, Prisma's
 * known codes) keep their message and carry their code; anything else becomes INTERNAL_SERVER_ERROR, with the message
 * only outside production.
 */
export function maskError(error: unknown, message: string, isDev = false): Error {
  const appError = toAppError(error);
  const graphqlError = error instanceof GraphQLError ? error : undefined;
  const location = { nodes: graphqlError?.nodes, path: graphqlError?.path, source: graphqlError?.source };
  if (appError) {
    // In place when it is already a GraphQL error (see below: a replaced error is logged as a server error).
    if (graphqlError && graphqlError.message === appError.message && appError.message.length <= MESSAGE_MAX) {
      Object.assign(graphqlError.extensions, extensionsOf(appError));
      return graphqlError;
    }
    return graphqlErrorOf(appError, location);
  }
  // GraphQL's own errors (syntax, validation, variable coercion) are safe to show as they are. Those without a code, or
  // with one outside SPEC §2 (Yoga's OPERATION_RESOLUTION_FAILURE for an operationName that picks no operation,
  // BAD_REQUEST for a mutation over GET), are the client's input: BAD_USER_INPUT. Recoded in place, as limits.ts does,
  // because Yoga logs every error that masking replaces as a server error.
  if (graphqlError && (!graphqlError.originalError || graphqlError.originalError instanceof GraphQLError)) {
    if (!GRAPHQL_CODES.has(graphqlError.extensions.code as string)) Object.assign(graphqlError.extensions, { code: 'BAD_USER_INPUT' });
    return graphqlError;
  }
  const original = originalOf(error);
  return createGraphQLError(isDev && original instanceof Error ? original.message : message, {
    ...location,
    extensions: { code: 'INTERNAL_SERVER_ERROR' },
  });
}
