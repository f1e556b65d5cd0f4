// The one translation of a failure into an AppError, whatever threw it: ours, GraphQL-wrapped, Fastify's (Ajv
// validation, FST_ codes, JSON), Prisma's, an unreachable database, Node's HTTP parser. Both doors' renderers call it.
import { isDatabaseUnavailableError } from '@users-posts/db';
import { GraphQLError } from 'graphql';
import { fieldErrors, type AjvFailure } from './ajv.js';
import { AppError, ErrorKinds, type ErrorKindName, type FieldError } from './app-error.js';
import { beyondOffsetWindow, DEFAULT_COLLECTION_LIMITS } from '../config/collection-limits.js';
import { fromPrismaCode } from './prisma.js';
import { databaseUnavailable } from './unavailable.js';

/** Fastify's own error codes, and Node's HTTP parser's (answered on the raw socket), that map onto the table. */
const CODES: Record<string, ErrorKindName> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'BAD_REQUEST',
  FST_ERR_CTP_INVALID_JSON_BODY: 'BAD_REQUEST',
  FST_ERR_BAD_URL: 'BAD_REQUEST',
  FST_ERR_MAX_PARAM_LENGTH: 'URI_TOO_LONG',
  // Node's HTTP parser: headers over its 16 KiB; headersTimeout or requestTimeout ran out (slow-loris).
  HPE_HEADER_OVERFLOW: 'HEADERS_TOO_LARGE',
  ERR_HTTP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
};

/** The shape of the errors Fastify hands its error handler (validation and status included). */
interface FrameworkError {
  code?: unknown;
  statusCode?: number;
  validation?: AjvFailure[];
  validationContext?: string;
  message: string;
}

/** The error a GraphQL error wraps (resolvers' errors reach masking wrapped, sometimes twice). */
export function originalOf(error: unknown): unknown {
  return error instanceof GraphQLError && error.originalError ? originalOf(error.originalError) : error;
}

/**
 * An `offset` past the contract's maximum (the offset window, SPEC §4 "At scale") said with the way on, cursor paging,
 * rather than Ajv's bare `must be <= 10000`: the same words as a page or a lowered MAX_OFFSET (collections/query.ts).
 */
function offsetWindowFailure(failures: AjvFailure[], field: FieldError): FieldError {
  const beyond = failures.some((failure) => failure.instancePath === '/offset' && failure.keyword === 'maximum');
  return field.field === 'offset' && beyond ? { field: 'offset', message: WINDOW } : field;
}

const WINDOW = beyondOffsetWindow(DEFAULT_COLLECTION_LIMITS);

/**
 * The AppError a failure stands for, or undefined when it is not one the product means to report (a bug: rendered as
 * the 500 or INTERNAL_SERVER_ERROR whose details are masked).
 */
export function toAppError(thrown: unknown): AppError | undefined {
  const error = originalOf(thrown);
  if (error instanceof AppError) return error;
  // A shape, not `instanceof Error`: Node's and drivers' errors may come from another realm (jest's VM modules).
  if (typeof error !== 'object' || error === null || typeof (error as { message?: unknown }).message !== 'string') return undefined;
  const framework = error as FrameworkError;
  if (framework.validation) {
    const fields = fieldErrors(framework.validation).map((field) => offsetWindowFailure(framework.validation!, field));
    return framework.validationContext === 'body'
      ? new AppError('VALIDATION_FAILED', 'Validation failed', fields)
      : new AppError(
          'BAD_QUERY_PARAMETER',
          `Invalid ${fields.map((f) => (f.message === WINDOW ? `${f.field}: ${WINDOW}` : f.field)).join(', ')}`,
          fields,
        );
  }
  const kind = typeof framework.code === 'string' ? CODES[framework.code] : undefined;
  if (kind === 'BAD_REQUEST')
    return new AppError(kind, `${framework.code === 'FST_ERR_BAD_URL' ? 'Malformed URL' : 'Malformed request body'}: ${framework.message}`);
  if (kind) return new AppError(kind);
  if (/^Unexpected token|JSON/.test(framework.message) && framework.statusCode === 400) {
    return new AppError('BAD_REQUEST', `Malformed JSON body: ${framework.message}`);
  }
  const prisma = fromPrismaCode(framework.code);
  if (prisma) return prisma;
  if (isDatabaseUnavailableError(framework)) return databaseUnavailable();
  const status = framework.statusCode;
  if (status && status >= 400 && status < 500) {
    const entry = Object.entries(ErrorKinds).find(([, value]) => value.status === status);
    if (entry) return new AppError(entry[0] as ErrorKindName, framework.message);
  }
  return undefined;
}
