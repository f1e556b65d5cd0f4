// The GraphQL door's wiring: mounts GraphQL Yoga on Fastify at /graphql (POST, GET, SSE subscriptions, GraphiQL for browsers) and graphql-ws on its upgrades.
//
// graphql/ by purpose, to read in this order: schema/ (what the schema means: buildGraphQLSchema, the resolvers, the
// @auth and @private directives, the DataLoaders, the per-operation context), guards/ (what an operation may cost and
// who may send it: armor limits, cost, the work budget, trusted documents, subscription caps), transports/ (how
// operations arrive and answers leave: HTTP here, WebSocket, SSE, GraphiQL, error rendering), acceleration/ (speed-ups
// held to parity tests). Every transport builds its context through schema/context.ts with a principal authorized for
// that operation (SPEC §2).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { createYoga, type Plugin } from 'graphql-yoga';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import type { DocumentNode } from 'graphql';
import { declareDocumentCache, documentCache } from '../bounds/document-cache.js';
import { graphqlAcceleration } from './acceleration/index.js';
import { createGraphQLContext } from './schema/context.js';
import { graphqlErrorBody, graphqlErrorMediaType, graphqlErrorOf, maskError } from './transports/errors.js';
import { graphiql } from './transports/graphiql.js';
import { streamCredentials } from './transports/stream-credentials.js';
import { limitPlugins } from './guards/limits.js';
import { PersistedDocuments } from './guards/persisted-documents.js';
import { errorForClient, SINGLE_CONNECTION_REFUSAL, sseDocumentErrors } from './transports/sse-refusals.js';
import { buildGraphQLSchema } from './schema/schema.js';
import { addressResolver, clientKey } from '../http/client-address.js';
import { varyByCaller } from '../http/vary.js';
import { AppError } from '../errors/app-error.js';
import { CAP_RETRY_AFTER_SECONDS, capMessage, SubscriptionCaps } from './guards/subscription-limits.js';
import { consumeSignup } from '../rate-limits/buckets.js';
import { serveGraphQLOverWebSocket, subscriptionStreams, type WebSocketServerContext } from './transports/websocket.js';
import { queryStringJson } from './transports/query-string-json.js';

/**
 * What GraphiQL opens with: a query that answers at once, and how to send a token (no default Authorization header:
 * a placeholder token would be refused with 401 even on public fields).
 */
export const GRAPHIQL_DEFAULT_QUERY = `# users-posts GraphQL: press the run button. Reads are public; currentUser and the mutations need a token:
# get one with POST /login (or the login mutation of your client), then add in the Headers tab below
#   {"Authorization": "Bearer <accessToken>"}
query Users {
  users(limit: 5) {
    id
    name
    posts { id title }
  }
}
`;

/** HTTP (and SSE) operations carry Fastify's request and its principal; WebSocket ones the socket's principal. */
type ServerContext = { req: FastifyRequest; reply: FastifyReply } | WebSocketServerContext;

const kSubscriptionRefused = Symbol('subscription refused by a cap');
export const BATCHED_SUBSCRIPTION_REFUSAL =
  'A subscription cannot be part of a batch: send it alone (Accept: text/event-stream) or over the WebSocket (graphql-transport-ws)';
type CappedRequest = FastifyRequest & { [kSubscriptionRefused]?: string };

/**
 * Every subscription over HTTP (SSE, or a multipart stream for `Accept: *\/*`) takes a slot of its client until its
 * response closes; over a cap nothing is subscribed and the route answers 429. Counted at the operation, not by the
 * Accept header, which Yoga reads more loosely. WebSocket operations are counted by graphql/transports/websocket.ts.
 */
function httpSubscriptionCaps(caps: SubscriptionCaps): Plugin {
  return {
    onSubscribe({ args, setResultAndStopExecution }) {
      const { req, reply } = args.contextValue as { req?: CappedRequest; reply?: FastifyReply };
      if (!req || !reply) return;
      // A stream cannot be one entry of a batch's JSON array (Yoga answered `[{}]`, found by the fuzz): refused as the
      // client's input, before it takes a slot.
      if (Array.isArray(req.body)) {
        setResultAndStopExecution({ errors: [graphqlErrorOf(new AppError('BAD_REQUEST', BATCHED_SUBSCRIPTION_REFUSAL))] });
        return;
      }
      const lease = caps.subscriptions.take(clientKey(req));
      if ('refused' in lease) {
        req[kSubscriptionRefused] = capMessage(lease.refused, caps.limits, 'subscription streams');
        setResultAndStopExecution({ errors: [graphqlErrorOf(new AppError('RATE_LIMITED', req[kSubscriptionRefused]))] });
        return;
      }
      reply.raw.once('close', lease.release);
    },
  };
}

async function graphqlPlugin(app: FastifyInstance): Promise<void> {
  // Error details (messages of unexpected errors, stack traces) only with NODE_ENV=development set explicitly.
  const production = !app.config.exposeErrors;
  const streams = subscriptionStreams();
  // SSE streams end with their credentials, as WebSockets do (graphql/transports/stream-credentials.ts).
  const credentials = streamCredentials(app.identity, app.db, app.config.subscriptionLimits.reverifyIntervalMs);
  // One tally of sockets and subscriptions (WebSocket and SSE) for the process (graphql/guards/subscription-limits.ts).
  const caps = new SubscriptionCaps(app.config.subscriptionLimits);
  // Trusted documents: read (and each hash checked) once, at start-up; a bad manifest stops it.
  const persisted = PersistedDocuments.fromConfig(app.config.persistedDocuments);
  // Traces (plugins/tracing.ts): loaded only when on.
  const tracing = app.tracerProvider ? (await import('../graphql/tracing.js')).graphqlTracing(app.tracerProvider) : [];
  // Optional speed-ups, each held to its parity test (graphql/acceleration/).
  const acceleration = graphqlAcceleration(app, { production, persisted });
  const ui = app.config.graphiql ? graphiql() : undefined;
  ui?.register(app);
  // Yoga's parse cache, keyed by the client's text: bounded in bytes, no long text kept (bounds/document-cache.ts).
  const parsed = { documentCache: documentCache<DocumentNode>(app.config.storeBounds), errorCache: documentCache<object>(app.config.storeBounds) };
  declareDocumentCache(app.stores, 'graphql-parsed-documents', 'the texts a client sends', parsed.documentCache, app.config.storeBounds);
  declareDocumentCache(app.stores, 'graphql-parse-errors', 'the texts a client sends that do not parse', parsed.errorCache, app.config.storeBounds);
  const yoga = createYoga<ServerContext>({
    schema: buildGraphQLSchema(),
    parserAndValidationCache: parsed,
    graphqlEndpoint: '/graphql',
    context: (server) =>
      'req' in server
        ? createGraphQLContext(app.services, server.req.principal, () => consumeSignup(app, server.req), server.req, server.req)
        : createGraphQLContext(app.services, server.principal, () => consumeSignup(app, { address: server.address }), server),
    maskedErrors: { maskError, isDev: !production },
    // GraphiQL (GRAPHIQL, on by default): a small page whose assets the product serves itself, compressed and cached
    // (graphql/transports/graphiql.ts), never from a CDN.
    graphiql: ui ? { title: 'users-posts GraphQL', defaultQuery: GRAPHIQL_DEFAULT_QUERY } : false,
    renderGraphiQL: (options) => ui!.page(options ?? {}),
    // GraphQL-over-HTTP's persisted documents name theirs with a `documentId` beside the usual parameters.
    extraParamNames: ['documentId'],
    plugins: [
      // A GET's variables or extensions that are not JSON: the client's 400, not an unexpected error.
      queryStringJson(),
      // Before the others: every later plugin sees the document a hash names, and an ad-hoc one refused in allow-list mode runs nothing.
      persisted.plugin(),
      // Speed-ups (compiled execution), before the work limit, whose execute wraps theirs.
      ...acceleration.plugins,
      ...limitPlugins(app.config.graphqlLimits),
      // @defer and @stream (incremental delivery over multipart HTTP, SSE and WebSocket): the directives and their
      // validation rules; Yoga's executor runs them, under the same cost limit (their fields are in the document) and
      // work budget (the deferred parts resolve within the same request).
      useDeferStream(),
      httpSubscriptionCaps(caps),
      streams.plugin,
      credentials.plugin,
      app.metrics.subscriptionsPlugin,
      app.contractUsage.graphqlPlugin,
      // Last: its execute wraps every other plugin's (the compiled one, the work limit), so what they run is traced.
      ...tracing,
    ],
    // CORS is @fastify/cors' (CORS_ORIGINS), as on every route; Yoga's own would reflect any origin.
    cors: false,
    batching: { limit: app.config.graphqlLimits.maxBatch },
    landingPage: false,
    logging: {
      debug: (...args) => app.log.debug(args.length === 1 ? args[0] : args),
      info: (...args) => app.log.info(args.length === 1 ? args[0] : args),
      warn: (...args) => app.log.warn(args.length === 1 ? args[0] : args),
      error: (...args) => app.log.error(args.length === 1 ? args[0] : args),
    },
  });

  const fastPath = acceleration.fastPath(yoga);
  app.route({
    url: yoga.graphqlEndpoint,
    method: ['GET', 'POST', 'OPTIONS'],
    handler: async (req, reply) => {
      // One plain JSON query or mutation: Yoga's envelop and result processor without its fetch-API layer.
      if (await fastPath(req, reply)) return reply;
      // An event-stream request with a document that does not parse or validate: an HTTP error, not stream data.
      const documentErrors = sseDocumentErrors(yoga, req, reply, persisted);
      if (documentErrors)
        return reply
          .status(400)
          .type('application/json; charset=utf-8')
          .send({ errors: documentErrors.map(errorForClient) });
      const response = await yoga.handleNodeRequestAndResponse(req, reply, { req, reply });
      const refused = (req as CappedRequest)[kSubscriptionRefused];
      if (refused) {
        // Over a subscription cap (httpSubscriptionCaps): nothing was subscribed; a plain 429 instead of a stream.
        await response.body?.cancel().catch(() => undefined);
        return reply
          .status(429)
          .header('retry-after', CAP_RETRY_AFTER_SECONDS)
          .type(graphqlErrorMediaType(req.headers.accept))
          .send(graphqlErrorBody(new AppError('RATE_LIMITED', refused)));
      }
      response.headers.forEach((value, key) => void reply.header(key, value));
      // A GET answer may be stored by a shared cache, and shows private fields to those who may see them (SPEC §3.1):
      // it is keyed on the caller's credentials too, so the anonymous answer is never handed to the owner.
      if (req.method === 'GET') varyByCaller(reply);
      reply.status(response.status);
      // Streams (SSE, incremental delivery) are piped as they come; a complete answer is sent as one buffer, which
      // spares piping a web ReadableStream through Node streams for every query (bench: GraphQL user by id).
      const type = response.headers.get('content-type') ?? '';
      if (response.body && (type.startsWith('text/event-stream') || type.startsWith('multipart/'))) return reply.send(response.body);
      const body = Buffer.from(await response.arrayBuffer());
      if (body.length === 0 && response.status >= 400) {
        // Yoga answers an Accept or Content-Type it cannot serve (406, 415) with no body: say why, in GraphQL's shape.
        const refusal =
          response.status === 406
            ? new AppError(
                'NOT_ACCEPTABLE',
                'Not acceptable: ask for application/graphql-response+json or application/json (an operation with @defer or @stream: multipart/mixed or text/event-stream)',
              )
            : response.status === 415
              ? new AppError('UNSUPPORTED_MEDIA_TYPE', 'Unsupported media type: send application/json')
              : new AppError('BAD_REQUEST');
        return reply.type(graphqlErrorMediaType(req.headers.accept)).send(graphqlErrorBody(refusal));
      }
      return reply.send(body);
    },
  });

  // graphql-sse's single connection mode reserves a stream with PUT: refused, saying what is served (a 404 said nothing).
  app.route({
    url: yoga.graphqlEndpoint,
    method: 'PUT',
    handler: async (req, reply) =>
      reply
        .status(405)
        .header('allow', 'GET, POST, OPTIONS')
        .type(graphqlErrorMediaType(req.headers.accept))
        .send(graphqlErrorBody(new AppError('METHOD_NOT_ALLOWED', SINGLE_CONNECTION_REFUSAL))),
  });

  const webSocket = serveGraphQLOverWebSocket({
    server: app.server,
    path: yoga.graphqlEndpoint,
    yoga,
    persisted,
    identity: app.identity,
    db: app.db,
    maxPayload: app.initialConfig.bodyLimit ?? 1024 * 1024,
    log: app.log,
    production,
    caps,
    addressOf: addressResolver(app.config.trustProxy),
    // The HTTP default bucket itself (plugins/rate-limit.ts): the same limiter and store as every HTTP request.
    consumeRateLimit: (key) => app.consumeRateLimit(app.defaultRateBucket, { key }),
    onAccessChanged: (listener) => app.identity.access.listen(listener),
    reverifyIntervalMs: app.config.subscriptionLimits.reverifyIntervalMs,
  });
  // Before the HTTP server closes (it waits for open connections): sockets get 1001, SSE streams complete.
  app.addHook('preClose', async () => {
    const sockets = webSocket.close();
    streams.endAll();
    credentials.close();
    await sockets;
  });
}

export default fp(graphqlPlugin, { name: 'graphql', dependencies: ['database', 'error-handler', 'auth', 'metrics', 'rate-limit'] });
