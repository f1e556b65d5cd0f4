// Recognises the errors that mean "the database is not there right now" (as opposed to a bad query or a bug), in every
// shape they reach the app: the pg driver's own, adapter-pg's DriverAdapterError, and the Prisma client's wrappers.

/** Socket failures of the connection to the server. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * SQLSTATEs of a server that is going, gone or full: class 08 (connection exception), 57P01 admin_shutdown (fast
 * stop), 57P02 crash_shutdown (immediate stop of the postmaster), 57P03 cannot_connect_now (starting or shutting
 * down), 53300 too_many_connections.
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/;

/** Prisma's codes for an unreachable server, a timeout, a closed connection, too many connections (driver adapters). */
const UNAVAILABLE_PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2037']);

/** adapter-pg's error kinds for the same (before the Prisma client turns them into P-codes). */
const UNAVAILABLE_ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);

/** Messages of the pg driver's errors that carry no code: a connection dropped mid-query, a pool wait timed out. */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/, // "Connection terminated unexpectedly", "Connection terminated due to connection timeout"
  /^timeout exceeded when trying to connect$/, // pg-pool's connectionTimeoutMillis
  /^Query read timeout$/, // the client's query_timeout: the server holds the connection but does not answer
  /^Client has encountered a connection error and is not queryable$/,
  /^Cannot use a pool after calling end on the pool$/,
];

type Shape = {
  code?: unknown;
  kind?: unknown;
  originalCode?: unknown;
  message?: unknown;
  cause?: unknown;
  meta?: { driverAdapterError?: unknown };
};

function matches(shape: Shape): boolean {
  const { code, kind, originalCode, message } = shape;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || UNAVAILABLE_PRISMA_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
  if (typeof kind === 'string' && UNAVAILABLE_ADAPTER_KINDS.has(kind)) return true;
  if (typeof originalCode === 'string' && UNAVAILABLE_SQLSTATE.test(originalCode)) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message));
}

/**
 * Whether `error` says the database is unreachable or went away (server stopped, restarting, connection dropped,
 * connect timeout, pool exhausted for too long): a 503, retryable, never the client's fault nor a 500. Follows
 * `cause` chains and the Prisma client's `meta.driverAdapterError`.
 */
export function isDatabaseUnavailableError(error: unknown): boolean {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current !== 'object' || current === null || seen.has(current)) continue;
    seen.add(current);
    const shape = current as Shape;
    if (matches(shape)) return true;
    pending.push(shape.cause, shape.meta?.driverAdapterError);
  }
  return false;
}
