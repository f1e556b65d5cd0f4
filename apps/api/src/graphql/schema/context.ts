// The per-request GraphQL context: the domain services and this request's DataLoaders.
import { isDatabaseUnavailableError } from '@users-posts/db';
import type { FastifyRequest } from 'fastify';
import { GraphQLError } from 'graphql';
import type { YogaServerInstance } from 'graphql-yoga';
import type { Principal } from '../../auth/principal.js';
import type { Services } from '../../services/index.js';
import { createLoaders, type Loaders } from './loaders.js';

export interface GraphQLContext {
  /** The caller, resolved once by the auth plugin (the same principal REST handlers see). */
  principal: Principal;
  services: Services;
  loaders: Loaders;
  /** The HTTP request (POST/GET/SSE; shared by every operation of a batch); absent on WebSocket operations. */
  request?: FastifyRequest | undefined;
  /**
   * Counts one account against the caller's sign-up bucket (SPEC §4), rejecting with RATE_LIMITED over it: by the HTTP
   * request's client, or by the WebSocket's (its user, else its address), so both transports share one bucket.
   */
  consumeSignup: () => Promise<void>;
  /**
   * A re-authorization of a running subscription under way (its user's access changed: websocket.ts,
   * stream-credentials.ts); each event waits for it, so it is shaped for the principal of after the change.
   */
  authorizing?: Promise<unknown> | undefined;
}

/**
 * The operation each principal was verified for (SPEC §0.1, §2): a principal is read for one HTTP request (every
 * operation of its batch shares it) or one WebSocket operation, and never remembered for a later one. A transport that
 * hands a later operation the principal of an earlier one (a socket's `connection_init`) fails here at that operation,
 * instead of running it with the rights of then. Anonymous has no rights to go stale.
 */
const verifiedFor = new WeakMap<Principal, object>();

function claimFor(principal: Principal, operation: object): void {
  if (principal.kind === 'anonymous') return;
  const owner = verifiedFor.get(principal);
  if (owner === undefined) verifiedFor.set(principal, operation);
  else if (owner !== operation) {
    throw new Error('A principal verified for one operation was handed to another: authorize every operation (auth/authenticate.ts)');
  }
}

/**
 * The context of one operation. `operation` is what the principal was verified for: the HTTP request, or the
 * WebSocket operation's own server context.
 */
export function createGraphQLContext(
  services: Services,
  principal: Principal,
  consumeSignup: () => Promise<void>,
  operation: object,
  request?: FastifyRequest,
): GraphQLContext {
  claimFor(principal, operation);
  return { principal, services, loaders: createLoaders(services), request, consumeSignup };
}

/** The first error among `errors` (GraphQL errors unwrapped) that says the database cannot be reached, if any. */
export function databaseUnavailableAmong(errors: readonly unknown[]): unknown {
  for (const error of errors) {
    let current: unknown = error;
    while (current instanceof GraphQLError && current.originalError) current = current.originalError;
    if (isDatabaseUnavailableError(current)) return current;
  }
  return undefined;
}

/**
 * `context` with services whose every method fails at once with `cause` (and loaders over them): for re-running a query
 * whose first run met an unreachable database, without waiting for the database's timeouts a second time.
 */
export function withUnreachableDatabase(context: GraphQLContext, cause: unknown): GraphQLContext {
  const failing = <T extends object>(service: T): T =>
    new Proxy(service, {
      get: (target, key) => (typeof Reflect.get(target, key) === 'function' ? () => Promise.reject(cause) : Reflect.get(target, key)),
    });
  const services = Object.fromEntries(
    Object.entries(context.services).map(([name, service]) => [name, failing(service as object)]),
  ) as unknown as Services;
  return { ...context, services, loaders: createLoaders(services) };
}

/**
 * Yoga's server whatever its server context: the fast path, the SSE preflight and the WebSocket door only call its
 * `getEnveloped` (Yoga's context parameters are invariant, so no narrower type accepts the door's own instance).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type AnyYoga = YogaServerInstance<any, any>;
