// The app factory: builds the whole Fastify instance from a validated Config.
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Database, PGliteThread } from '@users-posts/db';
import type { DestinationStream } from 'pino';
import Fastify, { type FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { Clock } from './auth/clock.js';
import type { IdentityStores } from './auth/identity.js';
import { ensureAdmin } from './bootstrap/admin.js';
import { decorateStores } from './bounds/stores.js';
import { trustProxyFunction } from './http/client-address.js';
import { capConnectionsPerAddress, limitSendStalls } from './http/connection-guards.js';
import type { Config } from './config/config.js';
import { logStream } from './log-output.js';
import authPlugin from './plugins/auth.js';
import contractUsagePlugin from './plugins/contract-usage.js';
import csrfPlugin from './plugins/csrf.js';
import databasePlugin from './plugins/database.js';
import domainPlugin from './plugins/domain.js';
import docsPlugin from './plugins/docs.js';
import errorHandlerPlugin, { clientErrorHandler, frameworkErrors } from './plugins/error-handler.js';
import graphqlPlugin from './graphql/plugin.js';
import metricsPlugin from './plugins/metrics.js';
import rateLimitPlugin from './plugins/rate-limit.js';
import restPlugin from './rest/plugin.js';
import securityHeadersPlugin from './plugins/security-headers.js';
import sharedStatePlugin from './plugins/shared-state.js';
import versioningPlugin, { rewriteUrl } from './plugins/versioning.js';
import { lazySerializerFactory } from './rest/serializer-compiler.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    /** Every route registered, as `METHOD url` (read by the contract drift check). */
    routeTable: { method: string; url: string }[];
  }
}

export interface AppOptions {
  /** An already-open database to use instead of opening one from the config (tests). */
  database?: Database;
  /** The embedded database's thread, started by main.ts before it loaded the app (else the app starts it). */
  pgliteThread?: PGliteThread | undefined;
  /** The time source of token, session and signature expiry (tests move it by hand). */
  clock?: Clock;
  /** Revocation and nonce stores (default: the shared state's, Redis with REDIS_URL, else in memory). */
  stores?: IdentityStores;
  /** Where spans go when traces are on, instead of the OTLP endpoint (tests: the SDK's in-memory exporter). */
  spanExporter?: SpanExporter;
  /** Where log lines go instead of stdout (tests read what the server says about a failure only the log tells). */
  logDestination?: DestinationStream;
}

/** Log fields that must never be written: credentials and secrets. */
export const REDACTED_LOG_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.accessToken',
  '*.refreshToken',
];

/** A client's x-request-id: 1–64 characters of [A-Za-z0-9._:-] (UUIDs, trace ids), else none. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
export function acceptedRequestId(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : undefined;
}

export async function buildApp(config: Config, options: AppOptions = {}): Promise<FastifyInstance> {
  // OpenTelemetry only when asked for (OTEL_EXPORTER_OTLP_ENDPOINT): otherwise not one of its modules is loaded.
  const tracing = config.tracing ? await import('./plugins/tracing.js') : undefined;
  const app = Fastify({
    logger: {
      level: config.logLevel,
      // Inside a traced request every line carries its traceId and spanId.
      ...(tracing ? { mixin: tracing.traceLogFields } : {}),
      // Readable lines on a terminal in development (log-output.ts); JSON lines otherwise.
      stream: options.logDestination ?? logStream(config.nodeEnv),
      redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' },
      // The api_key query parameter is a credential: log request paths without query strings.
      serializers: {
        req: (req) => ({ method: req.method, url: req.url.split('?')[0], remoteAddress: req.ip }),
      },
    },
    // An incoming x-request-id is kept only when short and well-formed (it reaches every log line and the response);
    // anything else (CR/LF for log injection, 10 KB ids) is replaced by a fresh UUID.
    requestIdHeader: false,
    genReqId: (req) => acceptedRequestId(req.headers['x-request-id']) ?? randomUUID(),
    // Behind a proxy (TRUST_PROXY) request.ip, and so every rate-limit bucket, is the client's address from
    // X-Forwarded-For; off by default, X-Forwarded-For is ignored (anyone could send one).
    // (a boolean, hop count or address list; Fastify takes each, but its overloads cannot resolve the union)
    trustProxy: trustProxyFunction(config.trustProxy),
    // Slow-loris: the request's headers must arrive within headersTimeout and the whole request (not the answer, so
    // SSE streams and WebSockets are unaffected) within requestTimeout. Node checks both every
    // connectionsCheckingInterval (30 s by default): a quarter of the headers timeout keeps the cut close to it.
    requestTimeout: config.http.requestTimeoutMs,
    http: {
      headersTimeout: Math.min(config.http.headersTimeoutMs, config.http.requestTimeoutMs),
      connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(config.http.headersTimeoutMs / 4))),
    },
    bodyLimit: 1024 * 1024,
    forceCloseConnections: 'idle',
    // Opening the embedded database runs its migrations (a first start, on a busy machine, can take over Fastify's
    // default 10 s); a database that does not answer fails sooner, by the pool's own connect timeout.
    pluginTimeout: 60_000,
    // Failures before routing (bad URL escapes, over-long path parameters, unparseable requests) in the envelope too.
    frameworkErrors,
    clientErrorHandler,
    // `/api/...` without a version in the path reaches the `/api/v1` routes (plugins/versioning.ts).
    rewriteUrl,
    schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory } },
  });
  // Connection cap (a flood of idle sockets): further connections are closed by Node at once.
  app.server.maxConnections = config.http.maxConnections;
  if (config.http.maxConnectionsPerAddress > 0) capConnectionsPerAddress(app.server, config.http.maxConnectionsPerAddress);
  limitSendStalls(app, config.http.sendTimeoutMs);
  app.decorate('config', config);
  app.decorate('routeTable', []);
  decorateStores(app);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) app.routeTable.push({ method, url: route.url });
  });
  // Hooks with nothing to await take Fastify's callback form throughout: no promise and microtask per hook and request.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    done(null, payload);
  });

  await app.register(errorHandlerPlugin);
  await app.register(securityHeadersPlugin);
  await app.register(sharedStatePlugin);
  await app.register(databasePlugin, { database: options.database, pgliteThread: options.pgliteThread });
  // Before the routes: @fastify/otel traces the routes registered after it.
  if (tracing && config.tracing) await app.register(tracing.default, { ...config.tracing, exporter: options.spanExporter });
  await app.register(metricsPlugin);
  await app.register(domainPlugin, { clock: options.clock, stores: options.stores });
  await app.register(authPlugin);
  await app.register(csrfPlugin);
  await app.register(versioningPlugin);
  await app.register(rateLimitPlugin);
  await app.register(contractUsagePlugin);
  await app.register(restPlugin);
  await app.register(graphqlPlugin);
  await app.register(docsPlugin);

  const { admin } = config;
  if (admin) {
    // Once the database is (the embedded one opens in its own thread meanwhile: the database plugin's onReady, before).
    app.addHook('onReady', async () => {
      const adminId = await ensureAdmin(app.db.prisma, admin);
      app.log.info({ userId: adminId }, 'administrator ensured');
    });
  }
  // Last of the start: the mail outbox's worker and the usage record's start-up reads run only once everything before
  // them is ready (the database migrated, the ADMIN ensured); a start that fails never sends, nor queries a database it
  // could not prepare.
  app.addHook('onReady', async () => {
    app.mail.start();
    app.contractUsage.start();
  });
  return app;
}
