// GraphQL subscriptions over WebSocket (`graphql-transport-ws`, the `graphql-ws` library) at the GraphQL path, and the
// end of every subscription stream (WebSocket and Server-Sent Events) when the app closes.
//
// Transport: a `ws` WebSocketServer in `noServer` mode answers the `upgrade` events of Fastify's own HTTP server for
// the GraphQL path, driven by graphql-ws's reference adapter `useServer` (graphql-ws/use/ws: subprotocol negotiation,
// ping/pong keep-alive, 1001 on dispose). Not @fastify/websocket: its upgrade passes through Fastify's request
// hooks, so the HTTP auth hook would judge the upgrade by headers and cookies (a stale `sid` cookie would refuse a
// socket whose connectionParams are fine), and the WebSocket door would share GET /graphql with Yoga's route.
// Here the socket is authenticated by `connectionParams` alone, as SPEC §2 says, and the HTTP route stays untouched.
//
// Execution goes through `yoga.getEnveloped(...)` (Yoga's documented graphql-ws recipe), so the WebSocket door runs
// Yoga's very plugins: the graphql-armor limits (QUERY_TOO_COMPLEX), masked errors, and @auth on the same context.
// Every operation kind is served over the socket (SPEC §2: graphql-ws's own documentation sends queries and mutations
// there, and an Apollo app may use only its GraphQLWsLink), each under the HTTP limits: one unit of the client's rate
// limit and an operation slot (the subscription caps, held until it completes), the same envelop plugins (armor, cost,
// run-time budget, trusted documents, @auth), and createUser counts against the sign-up bucket of the socket's client.
// A persisted document is named as over HTTP (persisted-documents.ts):
// `documentId` or `extensions.persistedQuery` in the subscribe payload, with `query: ""` (graphql-ws requires a string).
//
// Authentication: `connectionParams.authorization` = "Bearer <access token>", resolved by the same code as the HTTP
// Authorization header (pinned-algorithm verify, logout blocklist, tokenVersion). No `authorization` → anonymous
// (postCreated is public). A credential that does not verify → the connection is refused with close code 4403
// (graphql-ws's `Forbidden`, what its `onConnect` refusal means; clients treat it as final, no retry) and the cause
// as close reason; an internal failure (e.g. the database down) closes with 4500 and no details.
//
// Authorization per operation (SPEC §2): the socket keeps the token, never a principal. Every `subscribe` message
// verifies the token again through `principalFromBearer`, the function behind every HTTP Bearer request, so its role,
// sign-in, token version and "recent login" are those of that moment: a demoted ADMIN's next operation is refused, and a
// login older than RECENT_AUTH_MS is no longer recent here either. A subscription's events are shaped for the
// subscriber's current rights: its context's principal is replaced whenever the socket is verified again, which
// happens at once when the user's access changes on any instance (a role change, a deletion, a revocation:
// auth/access-changes.ts over the event bus) and every `reverifyIntervalMs` besides. A credential that no longer holds
// closes the socket with 4403; at the access token's `exp` too. Anonymous sockets are not affected.
//
// Exhaustion (SPEC §2, caps in subscription-limits.ts): every upgrade and every `subscribe` uses up one unit of the
// client's default rate-limit bucket (the HTTP one, same store); an upgrade over the rate limit or over the open-socket
// caps (per address, total) is refused with 429 before the handshake; a `subscribe` over the rate limit or the caps
// (per connection, per client, total) gets an `error` message with RATE_LIMITED, and the socket stays open.
//
// Shutdown: `close()` answers further upgrades with 503, closes every socket with 1001 (Going Away — graphql-ws
// clients with retries reconnect, to another instance behind a balancer) and terminates sockets that do not finish
// the closing handshake within a grace period, so `app.close()` never hangs on a silent peer. The streams plugin
// completes the subscriptions still open (SSE responses end with `event: complete`), so the HTTP server can close.
import type { Database } from '@users-posts/db';
import type { FastifyBaseLogger } from 'fastify';
import { getOperationAST, GraphQLError, type DocumentNode, type ExecutionArgs } from 'graphql';
import { CloseCode, type ConnectionInitMessage, type OperationResult, type SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { isAsyncIterable, Repeater, type Plugin } from 'graphql-yoga';
import type { AnyYoga } from '../schema/context.js';
import type { IncomingMessage, Server } from 'node:http';
import type { GraphQLContext } from '../schema/context.js';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { bearerToken, principalFromBearer } from '../../auth/authenticate.js';
import type { Identity } from '../../auth/identity.js';
import { anonymous, type Principal } from '../../auth/principal.js';
import { AppError, GraphQLOnlyCodes } from '../../errors/app-error.js';
import { graphqlErrorBody } from './errors.js';
import type { PersistedDocuments } from '../guards/persisted-documents.js';
import { CAP_RETRY_AFTER_SECONDS, capMessage, clientKeyOf, type Release, type SubscriptionCaps } from '../guards/subscription-limits.js';

/** What a WebSocket operation hands Yoga as server context (HTTP hands Fastify's request, carrying its principal). */
export interface WebSocketServerContext {
  principal: Principal;
  socket: WebSocket;
  params: SubscribePayload;
  /** The client's address (TRUST_PROXY applied), which the sign-up bucket of an anonymous socket is keyed on. */
  address: string;
}

/** Per-socket state graphql-ws keeps in `ctx.extra` next to the socket and the upgrade request. */
interface SocketExtra extends Record<PropertyKey, unknown> {
  /**
   * The user the token names, set once `connection_init` is accepted (for re-verification and the expiry timer only:
   * operations never run with it, each one is authorized afresh).
   */
  userId?: number;
  /** Set once `connection_init` is accepted. */
  admitted?: boolean;
  readonly socket: WebSocket;
  readonly request: IncomingMessage;
  /** The presented access token, re-verified on logout and periodically. */
  token?: string;
  /** When the access token expires: the socket is closed then. */
  expiry?: NodeJS.Timeout;
  /** The slot of each active subscription, by operation id. */
  subscriptions?: Map<string, Release>;
  /** The context of each running operation, by id: its principal is replaced when the socket is verified again. */
  contexts?: Map<string, GraphQLContext>;
  /** How many access changes of its user this socket has heard (an operation authorized before one is authorized again). */
  accessChanges?: number;
}

/** Execution args carrying Yoga's enveloped `execute` and `subscribe`, which graphql-ws then calls with them. */
interface EnvelopedExecutionArgs extends ExecutionArgs {
  envelopedExecute: (args: ExecutionArgs) => OperationResult;
  envelopedSubscribe: (args: ExecutionArgs) => OperationResult;
}

export interface GraphQLWebSocketOptions {
  /** Fastify's HTTP server (`app.server`), whose `upgrade` events are answered. */
  server: Server;
  /** The GraphQL path; upgrades to any other path get 404. */
  path: string;
  /** Any server context: only `getEnveloped` is used. */
  yoga: AnyYoga;
  /** The registered documents and the allow-list mode (Yoga's onParams, where its plugin works, is not run here). */
  persisted: PersistedDocuments;
  identity: Identity;
  db: Database;
  /** Largest accepted message in bytes (the HTTP body limit). */
  maxPayload: number;
  log: FastifyBaseLogger;
  production: boolean;
  /** How long `close()` waits for closing handshakes before it terminates the sockets left. */
  closeGraceMs?: number;
  /** The process-wide caps (shared with the SSE route). */
  caps: SubscriptionCaps;
  /** The client address of an upgrade request (`request.ip` semantics under TRUST_PROXY). */
  addressOf: (request: IncomingMessage) => string;
  /** Uses up one unit of the client's default rate-limit bucket; throws RATE_LIMITED (AppError) when exceeded. */
  consumeRateLimit: (clientKey: string) => Promise<void>;
  /** Registers a listener told when a user's access changed, on any instance (auth/access-changes.ts); returns its removal. */
  onAccessChanged: (listener: (userId: number) => void) => () => void;
  /** How often authenticated sockets are re-verified (default 30 s). */
  reverifyIntervalMs?: number | undefined;
}

export interface GraphQLWebSocket {
  /** Refuses new upgrades, closes every socket with 1001 and resolves once all are gone. */
  close(): Promise<void>;
}

/** The access token of `connectionParams` (undefined: anonymous), or throws why the connection must be refused. */
function tokenOf(params: ConnectionInitMessage['payload']): string | undefined {
  const authorization = params?.['authorization'] ?? params?.['Authorization'];
  if (authorization === undefined || authorization === null) return undefined;
  if (typeof authorization !== 'string') throw new AppError('UNAUTHENTICATED', 'connectionParams.authorization must be "Bearer <access token>"');
  return bearerToken(authorization);
}

/** A close reason fits in 123 bytes (RFC 6455 §5.5). */
function closeReason(message: string): string {
  return Buffer.byteLength(message) <= 123 ? message : 'Forbidden';
}

/**
 * A GraphQL error of any copy of graphql-js: CommonJS plugins (graphql-armor) and ES modules may load different copies,
 * so `instanceof` is not reliable.
 */
function isGraphQLError(error: unknown): error is GraphQLError {
  return error instanceof Error && error.name === 'GraphQLError';
}

/**
 * Errors as the HTTP door shows them: a stable `extensions.code`, without Yoga's internal `http` extension, rebuilt
 * with this module's graphql-js so graphql-ws recognises them as GraphQL errors (and sends them, not a 4500 close).
 */
function forClient(errors: readonly GraphQLError[], code: string): GraphQLError[] {
  return errors.map((error) => {
    const { http: _http, ...extensions } = (error.extensions ?? {}) as Record<string, unknown>;
    return new GraphQLError(error.message, {
      nodes: error.nodes,
      source: error.source,
      positions: error.positions,
      path: error.path,
      originalError: error.originalError,
      extensions: { ...extensions, code: extensions['code'] ?? code },
    });
  });
}

/** A coded error of the WebSocket door itself. */
const wsError = (message: string, code: string) => [new GraphQLError(message, { extensions: { code } })];

function refuseUpgrade(socket: Duplex, status: 404 | 503): void {
  const text = status === 404 ? 'Not Found' : 'Service Unavailable';
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/** 429 before the handshake, with Retry-After and the reason in GraphQL's error shape. */
function refuseUpgradeTooMany(socket: Duplex, message: string, retryAfterSeconds: number): void {
  const body = JSON.stringify(graphqlErrorBody(new AppError('RATE_LIMITED', message)));
  socket.end(
    `HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nRetry-After: ${retryAfterSeconds}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** The wait a RATE_LIMITED error of the rate-limit plugin names ("retry in N s"). */
function retryAfterOf(error: AppError): number {
  return Number(/retry in (\d+) s/.exec(error.message)?.[1] ?? CAP_RETRY_AFTER_SECONDS);
}

const isRateLimited = (error: unknown): error is AppError => error instanceof AppError && error.kind.graphqlCode === 'RATE_LIMITED';

/** setTimeout's longest delay (~24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Serves `graphql-transport-ws` on `options.server` at `options.path`, executing through Yoga. */
export function serveGraphQLOverWebSocket(options: GraphQLWebSocketOptions): GraphQLWebSocket {
  const { server, path, yoga, identity, db, log, caps } = options;
  const { limits } = caps;
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayload });
  /** The client address of each upgrade, resolved once before the handshake. */
  const addresses = new WeakMap<IncomingMessage, string>();
  /** Authenticated sockets by user, for re-verification. */
  // bound: one per open authenticated socket (HTTP_MAX_CONNECTIONS, per address HTTP_MAX_CONNECTIONS_PER_ADDRESS)
  const byUser = new Map<number, Set<SocketExtra>>();
  let closing = false;

  const forget = (extra: SocketExtra) => {
    clearTimeout(extra.expiry);
    extra.expiry = undefined;
    if (extra.userId !== undefined) {
      const sockets = byUser.get(extra.userId);
      sockets?.delete(extra);
      if (sockets?.size === 0) byUser.delete(extra.userId);
    }
  };

  /** Ends an authenticated socket whose credential no longer holds (4403, as a refused connection). */
  const forbid = (extra: SocketExtra, reason: string) => {
    forget(extra);
    log.info({ userId: extra.userId, reason }, 'GraphQL WebSocket closed: credential ended');
    extra.socket.close(CloseCode.Forbidden, closeReason(reason));
  };

  /**
   * The principal of an operation on this socket, now: the token verified again by the HTTP door's own function (role,
   * sign-in, token version, recent login of this moment), or anonymous. A credential that no longer holds closes the
   * socket (4403) and throws its AppError.
   */
  const authorize = async (extra: SocketExtra): Promise<Principal> => {
    if (!extra.token) return anonymous;
    try {
      return await principalFromBearer(extra.token, identity, db);
    } catch (error) {
      if (error instanceof AppError) forbid(extra, error.message);
      throw error;
    }
  };

  /**
   * Verifies the socket's token again (blocklist, tokenVersion, sign-in, user still there) and hands the running
   * subscriptions the principal of now, so their next events are shaped for it; a database failure keeps the socket
   * and its principals until the next check.
   */
  const reverify = (extra: SocketExtra) => {
    if (!extra.token || extra.socket.readyState !== extra.socket.OPEN) return;
    const contexts = [...(extra.contexts?.values() ?? [])];
    const authorizing = authorize(extra).then(
      (principal) => {
        for (const context of contexts) context.principal = principal;
      },
      (error: unknown) => {
        if (!(error instanceof AppError)) log.warn({ err: error }, 'GraphQL WebSocket re-verification failed; kept open until the next check');
      },
    );
    for (const context of contexts) context.authorizing = authorizing;
  };
  const reverifyUser = (userId: number) => {
    for (const extra of byUser.get(userId) ?? []) reverify(extra);
  };
  const stopListening = options.onAccessChanged((userId) => {
    for (const extra of byUser.get(userId) ?? []) extra.accessChanges = (extra.accessChanges ?? 0) + 1;
    reverifyUser(userId);
  });
  const reverifyTimer = setInterval(() => {
    for (const userId of byUser.keys()) reverifyUser(userId);
  }, options.reverifyIntervalMs ?? 30_000).unref();

  /** Admits the socket and, for a user, arms the expiry timer and registers it for re-verification. */
  const admit = (extra: SocketExtra, principal: Principal, token: string | undefined) => {
    extra.admitted = true;
    extra.subscriptions = new Map();
    extra.contexts = new Map();
    if (principal.kind !== 'user' || !token) return;
    extra.token = token;
    extra.userId = principal.userId;
    let sockets = byUser.get(principal.userId);
    if (!sockets) byUser.set(principal.userId, (sockets = new Set()));
    sockets.add(extra);
    if (principal.token) {
      // Timers run on real time; the token's exp is real time too (the identity clock is only replaced in tests).
      const delay = Math.min(Math.max(0, principal.token.exp * 1000 - Date.now()), MAX_TIMER_MS);
      extra.expiry = setTimeout(() => forbid(extra, 'The access token expired'), delay).unref();
    }
  };

  /**
   * The cheap refusals of a `subscribe`, before anything reads the database (SPEC §0.2): a duplicate id, the connection's
   * cap, the rate limit. The rate limit is keyed on the user the socket was admitted for (else its address), which
   * the operation's principal, read next, can only confirm or end (a credential that no longer holds closes the socket).
   */
  const reserveSubscription = async (extra: SocketExtra, id: string): Promise<GraphQLError[] | undefined> => {
    const address = addresses.get(extra.request) ?? 'unknown';
    const key = extra.userId !== undefined ? `user:${extra.userId}` : clientKeyOf(anonymous, address);
    const held = (extra.subscriptions ??= new Map());
    // The id is reserved before any await: `subscribe X, complete X, subscribe X` sent at once must not run two
    // subscriptions under one id (the second would overwrite the first's release, leaking its slot for good).
    if (held.has(id)) return wsError(`A subscription with id ${id} is already open on this connection`, 'BAD_USER_INPUT');
    if (held.size >= limits.perConnection) return wsError(capMessage('connection', limits), 'RATE_LIMITED');
    const reserved = () => {};
    held.set(id, reserved);
    try {
      await options.consumeRateLimit(key);
    } catch (error) {
      if (held.get(id) === reserved) held.delete(id);
      if (isRateLimited(error)) return wsError(error.message, 'RATE_LIMITED');
      throw error;
    }
    return undefined;
  };

  /** Then, with the principal of now: the per-client and total caps, the slot held until the subscription ends. */
  const leaseSubscription = (extra: SocketExtra, id: string, principal: Principal): GraphQLError[] | undefined => {
    const held = extra.subscriptions!;
    // Completed by the client while it was counted: nothing to run, nothing to hold.
    const reserved = held.get(id);
    if (reserved === undefined) return wsError(`Subscription ${id} was completed before it started`, 'BAD_USER_INPUT');
    const lease = caps.subscriptions.take(clientKeyOf(principal, addresses.get(extra.request) ?? 'unknown'));
    if ('refused' in lease) {
      if (held.get(id) === reserved) held.delete(id);
      return wsError(capMessage(lease.refused, limits), 'RATE_LIMITED');
    }
    held.set(id, lease.release);
    return undefined;
  };
  const releaseSubscription = (extra: SocketExtra, id: string) => {
    extra.subscriptions?.get(id)?.();
    extra.subscriptions?.delete(id);
    extra.contexts?.delete(id);
  };

  const disposable = useServer<ConnectionInitMessage['payload'], SocketExtra>(
    {
      isProd: options.production,
      onConnect: async (ctx) => {
        const remoteAddress = addresses.get(ctx.extra.request);
        try {
          const token = tokenOf(ctx.connectionParams);
          const principal = token === undefined ? anonymous : await principalFromBearer(token, identity, db);
          // Closed while the credential was checked: no timer or registration for a socket that is gone.
          if (ctx.extra.socket.readyState !== ctx.extra.socket.OPEN) return false;
          admit(ctx.extra, principal, token);
          return true;
        } catch (error) {
          if (error instanceof AppError) {
            log.info({ remoteAddress, reason: error.message }, 'GraphQL WebSocket refused');
            ctx.extra.socket.close(CloseCode.Forbidden, closeReason(error.message));
          } else {
            // Not the client's fault (e.g. the database is unreachable): no internals in the close reason.
            log.error({ err: error, remoteAddress }, 'GraphQL WebSocket authentication failed');
            ctx.extra.socket.close(CloseCode.InternalServerError, 'Internal server error');
          }
          return false; // graphql-ws's own 4403 close is a no-op now: the socket is closing already, with the cause
        }
      },
      onSubscribe: async (ctx, id, payload) => {
        const heard = ctx.extra.accessChanges ?? 0;
        const tooMany = await reserveSubscription(ctx.extra, id);
        if (tooMany) return tooMany;
        let principal: Principal;
        try {
          principal = await authorize(ctx.extra);
        } catch (error) {
          releaseSubscription(ctx.extra, id);
          // The socket is closing with 4403 and the cause (authorize): this operation runs nothing.
          if (error instanceof AppError) return wsError(error.message, 'UNAUTHENTICATED');
          throw error;
        }
        const refused = leaseSubscription(ctx.extra, id, principal);
        if (refused) return refused;
        let admitted = false;
        try {
          const result = await prepare(ctx.extra, id, payload, principal);
          admitted = !Array.isArray(result);
          // The user's access changed while this operation was being prepared: its context missed that re-verification.
          if (admitted && (ctx.extra.accessChanges ?? 0) !== heard) reverify(ctx.extra);
          return result;
        } finally {
          // Refused documents (parse, validation, limits, not a subscription) hold no slot.
          if (!admitted) releaseSubscription(ctx.extra, id);
        }
      },
      execute: (args) => (args as EnvelopedExecutionArgs).envelopedExecute(args),
      subscribe: (args) => (args as EnvelopedExecutionArgs).envelopedSubscribe(args),
      // Called when a subscription ends for any reason (client complete, stream end, error, socket closed).
      onComplete: (ctx, id) => releaseSubscription(ctx.extra, id),
      onClose: (ctx) => {
        for (const id of [...(ctx.extra.subscriptions?.keys() ?? [])]) releaseSubscription(ctx.extra, id);
        forget(ctx.extra);
      },
    },
    wss,
  );

  /** Parses and validates through Yoga's envelop (armor, cost, …); the execution args, or the errors to answer. */
  async function prepare(
    extra: SocketExtra,
    id: string,
    payload: SubscribePayload,
    principal: Principal,
  ): Promise<EnvelopedExecutionArgs | GraphQLError[]> {
    const address = addresses.get(extra.request) ?? extra.request.socket.remoteAddress ?? 'unknown';
    const context: WebSocketServerContext = { principal, socket: extra.socket, params: payload, address };
    const { schema, parse, validate, execute, subscribe, contextFactory } = yoga.getEnveloped(context);
    const source = options.persisted.resolve(payload);
    if (source instanceof GraphQLError) return forClient([source], String(source.extensions.code));
    const query = source?.query ?? payload.query;

    // Armor rejects by throwing, from the parser (token limit) and from validation rules (depth, cost, …);
    // thrown out of onSubscribe, an error would close the whole socket (4500), so it is answered as an error.
    let document: DocumentNode;
    try {
      document = parse(query);
    } catch (error) {
      if (isGraphQLError(error)) return forClient([error], GraphQLOnlyCodes.GRAPHQL_PARSE_FAILED);
      throw error;
    }
    let errors: readonly GraphQLError[];
    try {
      errors = validate(schema, document);
    } catch (error) {
      if (isGraphQLError(error)) return forClient([error], GraphQLOnlyCodes.GRAPHQL_VALIDATION_FAILED);
      throw error;
    }
    if (errors.length > 0) return forClient(errors, GraphQLOnlyCodes.GRAPHQL_VALIDATION_FAILED);

    const operation = getOperationAST(document, payload.operationName);
    if (!operation) return wsError('Unable to identify the operation to run', GraphQLOnlyCodes.GRAPHQL_VALIDATION_FAILED);
    const contextValue = (await contextFactory()) as unknown as GraphQLContext;
    extra.contexts?.set(id, contextValue);
    return {
      schema,
      document,
      operationName: payload.operationName,
      variableValues: payload.variables,
      contextValue,
      // graphql-ws runs a subscription through `subscribe`, a query or mutation through `execute`: both Yoga's.
      envelopedExecute: execute as (args: ExecutionArgs) => OperationResult,
      envelopedSubscribe: subscribe as (args: ExecutionArgs) => OperationResult,
    };
  }

  /** Rate limit, then the open-socket caps, all before the handshake; the socket slot is held until the TCP socket closes. */
  const admitUpgrade = async (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const address = options.addressOf(request);
    const key = clientKeyOf(anonymous, address);
    try {
      await options.consumeRateLimit(key);
    } catch (error) {
      if (isRateLimited(error)) return refuseUpgradeTooMany(socket, error.message, retryAfterOf(error));
      throw error;
    }
    if (socket.destroyed || closing) return socket.destroy();
    const lease = caps.sockets.take(key);
    if ('refused' in lease) return refuseUpgradeTooMany(socket, capMessage(lease.refused, limits, 'WebSockets'), CAP_RETRY_AFTER_SECONDS);
    // The TCP socket closes in every case (handshake refused by ws, closed by either side, terminated).
    socket.once('close', lease.release);
    addresses.set(request, address);
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
  };

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const pathname = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (closing) return refuseUpgrade(socket, 503);
    if (pathname !== path) return refuseUpgrade(socket, 404);
    admitUpgrade(request, socket, head).catch((error: unknown) => {
      log.error({ err: error }, 'GraphQL WebSocket upgrade failed');
      socket.destroy();
    });
  };
  server.on('upgrade', onUpgrade);

  return {
    async close() {
      if (closing) return;
      closing = true;
      server.off('upgrade', onUpgrade);
      clearInterval(reverifyTimer);
      stopListening();
      const grace = setTimeout(() => {
        for (const client of wss.clients) client.terminate();
      }, options.closeGraceMs ?? 2_000);
      try {
        await disposable.dispose(); // 1001 Going away to every client, then waits until all are closed
      } finally {
        clearTimeout(grace);
      }
    },
  };
}

export interface SubscriptionStreams {
  /** The Yoga plugin that makes every subscription stream (any transport) endable. */
  plugin: Plugin;
  /** Completes every open subscription stream, and the ones that start from now on. */
  endAll(): void;
}

/** Ends subscription streams at shutdown, so an open SSE response does not hold the HTTP server open. */
export function subscriptionStreams(): SubscriptionStreams {
  const stops = new Set<() => void>();
  let ended = false;
  const untilEnded = <T>(source: AsyncIterable<T>) =>
    Repeater.race([
      source,
      new Repeater<never>(async (_push, stop) => {
        if (ended) return stop();
        stops.add(stop);
        await stop;
        stops.delete(stop);
      }),
    ]);
  return {
    plugin: {
      onSubscribe: () => ({
        onSubscribeResult: ({ result, setResult }) => {
          if (isAsyncIterable(result)) setResult(untilEnded(result));
        },
      }),
    },
    endAll() {
      ended = true;
      for (const stop of stops) stop();
    },
  };
}
