// Where failures meet the pipeline: Fastify's error handler, routing and socket errors, and the 404 route, each
// translated by toAppError (errors/) and rendered by the door's renderer (rest/error-envelope.ts, graphql/transports/errors.ts).
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import type { Duplex } from 'node:stream';
import { AppError } from '../errors/app-error.js';
import { toAppError } from '../errors/to-app-error.js';
import { databaseUnavailable } from '../errors/unavailable.js';
import { graphqlErrorBody, graphqlErrorMediaType } from '../graphql/transports/errors.js';
import { answerMethodNotAllowed } from './method-not-allowed.js';
import { errorBody, rawErrorResponse, sendRestError, wwwAuthenticate } from '../rest/error-envelope.js';

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
      if (appError.status >= 500) request.log[appError.kind.logAs ?? 'error']({ err: error }, appError.message);
      // Failures before GraphQL runs (bad credentials, body too large) still answer in GraphQL's shape there.
      if (request.routeOptions.url === '/graphql') {
        return reply.status(appError.status).type(graphqlErrorMediaType(request.headers.accept)).send(graphqlErrorBody(appError));
      }
      return sendRestError(request, reply, appError);
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
    if (reply.statusCode === 401 && !reply.hasHeader('www-authenticate'))
      reply.header('www-authenticate', wwwAuthenticate(request.headers.authorization));
    done(null, payload);
  });

  answerMethodNotAllowed(app);
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
  // A socket's own failure (EPIPE, ETIMEDOUT) would translate as the database's absence: only a 4xx is the client's.
  const appError = toAppError(error);
  socket.end(rawErrorResponse(appError && appError.status < 500 ? appError : new AppError('BAD_REQUEST')));
}

export default fp(errorHandlerPlugin, { name: 'error-handler' });
