// The REST door's renderer of an AppError: the error envelope of SPEC §4 `{code, message, errors?}`, its headers
// (ETag of a refused If-Match, Retry-After, the 401 challenge) and the login's own 401 shape.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AUTH_ERROR_MAX } from '@users-posts/contracts';
import { AppError, clip, ErrorKinds, FIELD_MAX, MESSAGE_MAX, type FieldError } from '../errors/app-error.js';
import { etagOf } from './conditional.js';

export interface ErrorBody {
  code: number;
  message: string;
  errors?: FieldError[];
  /** 401 bodies also carry `error` (seed §5 rule 1). */
  error?: string;
}

/** The envelope of an error, its strings within the contract's bounds whatever a message echoed (`clip`). */
export function errorBody(error: AppError): ErrorBody {
  const message = clip(error.message, MESSAGE_MAX);
  return {
    code: error.kind.code,
    message,
    ...(error.fields
      ? { errors: error.fields.map((field) => ({ field: clip(field.field, FIELD_MAX), message: clip(field.message, MESSAGE_MAX) })) }
      : {}),
    ...(error.kind.status === 401 ? { error: clip(error.message, AUTH_ERROR_MAX) } : {}),
  };
}

/** An error envelope as raw HTTP/1.1 bytes, for the answers written on a socket before Fastify has a request. */
export function rawErrorResponse(error: AppError): string {
  const body = JSON.stringify(errorBody(error));
  return (
    `HTTP/1.1 ${error.status} ${error.kind.message}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/**
 * The challenge of every 401 (RFC 9110 §11.6.1): the Bearer scheme of RFC 6750 §3, with `error="invalid_token"` when a
 * bearer token was presented and refused (expired, revoked, malformed), so clients know to refresh or log in again.
 */
export function wwwAuthenticate(authorization: string | undefined): string {
  const presentedBearer = /^Bearer\s/i.test(authorization ?? '');
  return presentedBearer ? 'Bearer realm="users-posts", error="invalid_token"' : 'Bearer realm="users-posts"';
}

/** Sends `error` as the REST door answers it. */
export function sendRestError(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  // POST /login documents its 401 as `{success: false, error, code, message}`, also when a presented credential fails.
  if (error.status === 401 && request.routeOptions.url === '/login') {
    return reply.status(401).send({ success: false, ...errorBody(error) });
  }
  // A refused If-Match names the version found, as the ETag the client should have sent (conditional.ts): of the view
  // the If-Match was judged against, the one this caller is shown (services/preconditions.ts).
  if (error.currentVersion !== undefined) {
    reply.header('etag', etagOf({ version: error.currentVersion, privateVersion: error.currentPrivateVersion }));
  }
  // The first request with the key is still running: worth a retry in a moment, unlike any other conflict.
  if (error.kind === ErrorKinds.IDEMPOTENCY_KEY_IN_USE) reply.header('retry-after', '1');
  // The mail outbox drains at SMTP's pace: about the time a few thousand messages take (mail/delivery.ts).
  if (error.kind === ErrorKinds.MAIL_QUEUE_FULL) reply.header('retry-after', '30');
  // A full store frees as its entries expire: the rate limiter writes its own (the oldest window's end), others a minute.
  if (error.kind === ErrorKinds.STORE_FULL && !reply.hasHeader('retry-after')) reply.header('retry-after', '60');
  return reply.status(error.status).send(errorBody(error));
}
