// Renders every failure as the error envelope of SPEC §4, with its five-digit code; also the 404 route.
import { isDatabaseUnavailableError } from '@users-posts/db';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import type { Duplex } from 'node:stream';
import { AppError, clip, ErrorKinds, FIELD_MAX, MESSAGE_MAX, type ErrorKindName, type FieldError } from '../errors.js';
import { etagOf } from '../rest/conditional.js';
import { fieldErrors } from '../rest/validation-errors.js';

export interface ErrorBody {
  code: number;
  message: string;
  errors?: FieldError[];
  /** 401 bodies also carry `error` (seed §5 rule 1). */
  error?: string;
}

/** The envelope of an error, its strings within the contract's bounds whatever a message echoed (errors.ts `clip`). */
export function errorBody(error: AppError): ErrorBody {
  const message = clip(error.message, MESSAGE_MAX);
  return {
    code: error.kind.code,
    message,
    ...(error.fields ? { errors: error.fields.map((field) => ({ field: clip(field.field, FIELD_MAX), message: clip(field.message, MESSAGE_MAX) })) } : {}),
    ...(error.kind.status === 401 ? { error: clip(error.message, 200) } : {}),
  };
}

/**
 * The challenge of every 401 (RFC 9110 §11.6.1): the Bearer scheme of RFC 6750 §3, with `error="invalid_token"` when a
 * bearer token was presented and refused (expired, revoked, malformed), so clients know to refresh or log in again.
 */
export function wwwAuthenticate(authorization: string | undefined): string {
  const presentedBearer = /^Bearer\s/i.test(authorization ?? '');
  return presentedBearer ? 'Bearer realm="users-posts", error="invalid_token"' : 'Bearer realm="users-posts"';
}

/** Fastify's own error codes that map onto our table. */
const FASTIFY_CODES: Record<string, ErrorKindName> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'BAD_REQUEST',
  FST_ERR_CTP_INVALID_JSON_BODY: 'BAD_REQUEST',
  FST_ERR_BAD_URL: 'BAD_REQUEST',
  FST_ERR_MAX_PARAM_LENGTH: 'URI_TOO_LONG',
};

/** Prisma error codes that are the client's doing, and every shape of the database's absence (see @users-posts/db). */
function fromPrisma(error: { code?: unknown; message: string }): AppError | undefined {
  if (error.code === 'P2002') return new AppError('CONFLICT', 'A resource with these unique fields already exists');
  if (error.code === 'P2025') return new AppError('NOT_FOUND');
  // An interactive transaction that waited too long for a connection or ran out of time: the database is saturated.
  if (error.code === 'P2028') return new AppError('UNAVAILABLE', 'Database busy: try again');
  if (isDatabaseUnavailableError(error)) return databaseUnavailable();
  return undefined;
}

/** The answer while the database is unreachable: 503 (REST, code 50300), a coded error in GraphQL. */
export const databaseUnavailable = (): AppError => new AppError('UNAVAILABLE', 'Database unavailable');

export function toAppError(error: FastifyError | Error): AppError | undefined {
  if (error instanceof AppError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const fields = fieldErrors(fastifyError.validation);
    return fastifyError.validationContext === 'body'
      ? new AppError('VALIDATION_FAILED', 'Validation failed', fields)
      : new AppError('BAD_QUERY_PARAMETER', `Invalid ${fields.map((f) => f.field).join(', ')}`, fields);
  }
  const kind = fastifyError.code ? FASTIFY_CODES[fastifyError.code] : undefined;
  if (kind) return new AppError(kind, kind === 'BAD_REQUEST' ? `Malformed request body: ${error.message}` : undefined);
  if (/^Unexpected token|JSON/.test(error.message) && fastifyError.statusCode === 400) {
    return new AppError('BAD_REQUEST', `Malformed JSON body: ${error.message}`);
  }
  const prisma = fromPrisma(error as { code?: unknown; message: string });
  if (prisma) return prisma;
  const status = fastifyError.statusCode;
  if (status && status >= 400 && status < 500) {
    const entry = Object.entries(ErrorKinds).find(([, value]) => value.status === status);
    if (entry) return new AppError(entry[0] as ErrorKindName, error.message);
  }
  return undefined;
}

/**
 * Whether the app's database handle has been closed underneath it (its `prisma` getter then throws
 * `Database is closed`); queries through clients taken earlier fail with the driver's own error (e.g. PGlite's
 * `PGlite is closed`), so the handle's state, not the message, decides that such a failure is a 503.
 */
function databaseClosed(app: FastifyInstance): boolean {
  if (!app.hasDecorator('db')) return false;
  try {
    void app.db.prisma;
    return false;
  } catch {
    return true;
  }
}

async function errorHandlerPlugin(app: FastifyInstance): Promise<void> {
  // Unexpected errors' messages (source paths, SQL) only with NODE_ENV=development set explicitly (quiet by default).
  const production = !app.config.exposeErrors;

  app.setErrorHandler((error: FastifyError, request, reply: FastifyReply) => {
    const appError = toAppError(error) ?? (databaseClosed(app) ? databaseUnavailable() : undefined);
    if (appError) {
      if (appError.status >= 500) request.log.error({ err: error }, appError.message);
      // Failures before GraphQL runs (bad credentials, body too large) still answer in GraphQL's shape there.
      if (request.routeOptions.url === '/graphql') {
        const extensions = { code: appError.kind.graphqlCode, ...(appError.fields ? { fields: appError.fields } : {}) };
        return reply.status(appError.status).send({ errors: [{ message: appError.message, extensions }] });
      }
      // POST /login documents its 401 as `{success: false, error, code, message}`, also when a presented credential fails.
      if (appError.status === 401 && request.routeOptions.url === '/login') {
        return reply.status(401).send({ success: false, ...errorBody(appError) });
      }
      // A refused If-Match names the version found, as the ETag the client should have sent (conditional.ts).
      if (appError.currentVersion !== undefined) reply.header('etag', etagOf(appError.currentVersion));
      // The first request with the key is still running: worth a retry in a moment, unlike any other conflict.
      if (appError.kind === ErrorKinds.IDEMPOTENCY_KEY_IN_USE) reply.header('retry-after', '1');
      return reply.status(appError.status).send(errorBody(appError));
    }
    request.log.error({ err: error }, 'unhandled error');
    const internal = new AppError('INTERNAL', production ? undefined : error.message);
    return reply.status(500).send(errorBody(internal));
  });

  // An answer sent before the request body was read to its end (415 for a media type no parser takes, a 401 from the
  // hooks, …) closes the connection: the unread bytes would otherwise sit in front of the next request on a keep-alive
  // connection, and that request would wait forever (found by the fuzz with a 2 MB body in no content type).
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!request.raw.complete) reply.header('connection', 'close');
    if (reply.statusCode === 401 && !reply.hasHeader('www-authenticate')) reply.header('www-authenticate', wwwAuthenticate(request.headers.authorization));
    done(null, payload);
  });

  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send(errorBody(new AppError('NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`))),
  );
}

/**
 * Fastify's `frameworkErrors`: failures found while routing, before any route (or its error handler) is chosen: a bad
 * %-escape in the path → FST_ERR_BAD_URL 400; a path parameter over `maxParamLength` → FST_ERR_MAX_PARAM_LENGTH 414.
 * Rendered here in the envelope, as the error handler renders every other failure.
 */
export function frameworkErrors(error: FastifyError, _request: unknown, reply: FastifyReply): void {
  const appError = toAppError(error) ?? new AppError('BAD_REQUEST', error.message);
  reply.status(appError.status).send(errorBody(appError));
}

/**
 * Node's HTTP parser failures, answered on the raw socket before Fastify sees a request (so no hook, header or
 * handler applies): headers over Node's 16 KiB → 431, anything else unparseable → 400, in the envelope like the rest.
 * Replaces Fastify's default `clientErrorHandler`, which answers with a body of its own shape.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  // ERR_HTTP_REQUEST_TIMEOUT: headersTimeout or requestTimeout ran out (slow-loris), as Node's own handler answers it.
  const kind: ErrorKindName =
    error.code === 'HPE_HEADER_OVERFLOW' ? 'HEADERS_TOO_LARGE' : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'REQUEST_TIMEOUT' : 'BAD_REQUEST';
  const appError = new AppError(kind);
  const body = JSON.stringify(errorBody(appError));
  socket.end(
    `HTTP/1.1 ${appError.status} ${appError.kind.message}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

export default fp(errorHandlerPlugin, { name: 'error-handler' });
