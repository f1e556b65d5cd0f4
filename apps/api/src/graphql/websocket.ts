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
// Only subscriptions are served over the socket: queries and mutations go to POST /graphql, where the rate limits,
// the body limit and the request log apply.
//
// Authentication: `connectionParams.authorization` = "Bearer <access token>", resolved by the same code as the HTTP
// Authorization header (pinned-algorithm verify, logout blocklist, tokenVersion). No `authorization` → anonymous
// (postCreated is public). A credential that does not verify → the connection is refused with close code 4403
// (graphql-ws's `Forbidden`, what its `onConnect` refusal means; clients treat it as final, no retry) and the cause
// as close reason; an internal failure (e.g. the database down) closes with 4500 and no details. The principal is
// fixed for the socket's life: a token that expires or is revoked later does not end an open socket.
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
import { isAsyncIterable, Repeater, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { bearerToken, principalFromBearer } from '../auth/authenticate.js';
import type { Identity } from '../auth/identity.js';
import { anonymous, type Principal } from '../auth/principal.js';
import { AppError } from '../errors.js';

/** What a WebSocket operation hands Yoga as server context (HTTP hands Fastify's request, carrying its principal). */
export interface WebSocketServerContext {
  principal: Principal;
  socket: WebSocket;
  params: SubscribePayload;
}

/** Per-socket state graphql-ws keeps in `ctx.extra` next to the socket and the upgrade request. */
interface SocketExtra extends Record<PropertyKey, unknown> {
  principal: Principal;
}

/** Execution args carrying Yoga's enveloped `subscribe`, which graphql-ws then calls with them. */
interface EnvelopedExecutionArgs extends ExecutionArgs {
  envelopedSubscribe: (args: ExecutionArgs) => OperationResult;
}

export interface GraphQLWebSocketOptions {
  /** Fastify's HTTP server (`app.server`), whose `upgrade` events are answered. */
  server: Server;
  /** The GraphQL path; upgrades to any other path get 404. */
  path: string;
  /** Any server context: only `getEnveloped` is used. */
  yoga: YogaServerInstance<any, any>;
  identity: Identity;
  db: Database;
  /** Largest accepted message in bytes (the HTTP body limit). */
  maxPayload: number;
  log: FastifyBaseLogger;
  production: boolean;
  /** How long `close()` waits for closing handshakes before it terminates the sockets left. */
  closeGraceMs?: number;
}

export interface GraphQLWebSocket {
  /** Refuses new upgrades, closes every socket with 1001 and resolves once all are gone. */
  close(): Promise<void>;
}

/** Resolves `connectionParams` to a principal, or throws why the connection must be refused. */
async function principalOf(params: ConnectionInitMessage['payload'], identity: Identity, db: Database): Promise<Principal> {
  const authorization = params?.['authorization'] ?? params?.['Authorization'];
  if (authorization === undefined || authorization === null) return anonymous;
  if (typeof authorization !== 'string') throw new AppError('UNAUTHENTICATED', 'connectionParams.authorization must be "Bearer <access token>"');
  return principalFromBearer(bearerToken(authorization), identity, db);
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

/** Serves `graphql-transport-ws` on `options.server` at `options.path`, executing through Yoga. */
export function serveGraphQLOverWebSocket(options: GraphQLWebSocketOptions): GraphQLWebSocket {
  const { server, path, yoga, identity, db, log } = options;
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayload });
  let closing = false;

  const disposable = useServer<ConnectionInitMessage['payload'], SocketExtra>(
    {
      isProd: options.production,
      onConnect: async (ctx) => {
        const remoteAddress = ctx.extra.request.socket.remoteAddress;
        try {
          ctx.extra.principal = await principalOf(ctx.connectionParams, identity, db);
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
      onSubscribe: async (ctx, _id, payload) => {
        const principal = ctx.extra.principal ?? anonymous;
        const context: WebSocketServerContext = { principal, socket: ctx.extra.socket, params: payload };
        const { schema, parse, validate, subscribe, contextFactory } = yoga.getEnveloped(context);

        // Armor rejects by throwing, from the parser (token limit) and from validation rules (depth, cost, …);
        // thrown out of onSubscribe, an error would close the whole socket (4500), so it is answered as an error.
        let document: DocumentNode;
        try {
          document = parse(payload.query);
        } catch (error) {
          if (isGraphQLError(error)) return forClient([error], 'GRAPHQL_PARSE_FAILED');
          throw error;
        }
        let errors: readonly GraphQLError[];
        try {
          errors = validate(schema, document);
        } catch (error) {
          if (isGraphQLError(error)) return forClient([error], 'GRAPHQL_VALIDATION_FAILED');
          throw error;
        }
        if (errors.length > 0) return forClient(errors, 'GRAPHQL_VALIDATION_FAILED');

        const operation = getOperationAST(document, payload.operationName);
        if (!operation) return wsError('Unable to identify the operation to run', 'GRAPHQL_VALIDATION_FAILED');
        if (operation.operation !== 'subscription') {
          return wsError(`Only subscriptions are served over WebSocket; send a ${operation.operation} to POST ${path}`, 'BAD_USER_INPUT');
        }
        const args: EnvelopedExecutionArgs = {
          schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue: await contextFactory(),
          envelopedSubscribe: subscribe as (args: ExecutionArgs) => OperationResult,
        };
        return args;
      },
      subscribe: (args) => (args as EnvelopedExecutionArgs).envelopedSubscribe(args),
    },
    wss,
  );

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const pathname = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (closing) return refuseUpgrade(socket, 503);
    if (pathname !== path) return refuseUpgrade(socket, 404);
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
  };
  server.on('upgrade', onUpgrade);

  return {
    async close() {
      if (closing) return;
      closing = true;
      server.off('upgrade', onUpgrade);
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
