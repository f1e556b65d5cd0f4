// Prometheus metrics at GET /metrics (SPEC §5; only with METRICS_TOKEN or on METRICS_PORT): request counts and latencies by route pattern, default process metrics,
// open GraphQL subscriptions (WebSocket and SSE alike), database reachability and, on PostgreSQL, the connection pool.
// One registry per app instance.
import type { FastifyInstance } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { AppError } from '../errors/app-error.js';
import fp from 'fastify-plugin';
import type { Plugin } from 'graphql-yoga';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
    /** The listener of METRICS_PORT, when set (listening once the app listens). */
    metricsServer?: Server;
  }
}

export interface Metrics {
  registry: Registry;
  /** A Yoga (envelop) plugin counting open subscription streams in `graphql_active_subscriptions`. */
  subscriptionsPlugin: Plugin;
  /** Counts a query run compiled (graphql/acceleration/compiled-execution.ts), by which executor's answer was sent. */
  countCompiledExecution: (answeredBy: 'compiled' | 'graphql-js') => void;
  /** Counts a message of the mail outbox by outcome (mail/delivery.ts): sent, skipped, failed, or dropped (over budget, queue full). */
  countMail: (outcome: 'sent' | 'skipped' | 'failed' | 'dropped', kind: string) => void;
  /** Where `mail_outbox_pending` reads the outbox's waiting rows at scrape time. */
  watchMailOutbox: (pending: () => Promise<number>) => void;
}

/** How long a scrape waits for the database ping behind `db_up`. */
const DB_PING_TIMEOUT_MS = 1_000;
/** The `route` label of requests that matched no route (404s): never the raw URL, which would be unbounded. */
const UNMATCHED_ROUTE = 'unmatched';

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const isAsyncIterable = (value: unknown): value is AsyncIterable<unknown> =>
  typeof value === 'object' && value !== null && Symbol.asyncIterator in value;

/**
 * `source` as an iterator that holds the gauge up from now until it ends: by completion, error, or the client going
 * away (`return()`, which Yoga calls when an SSE request is aborted and graphql-ws on `complete`/close). A hand-written
 * iterator rather than an async generator, whose `return()` would wait for the pending `next()` (the next event).
 */
function counted<T>(source: AsyncIterable<T>, gauge: Gauge): AsyncIterableIterator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let open = true;
  gauge.inc();
  const finish = () => {
    if (open) {
      open = false;
      gauge.dec();
    }
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      try {
        const result = await iterator.next();
        if (result.done) finish();
        return result;
      } catch (error) {
        finish();
        throw error;
      }
    },
    async return(value?: unknown) {
      finish();
      return iterator.return ? iterator.return(value) : { done: true, value: value as T };
    },
    async throw(error?: unknown) {
      finish();
      if (iterator.throw) return iterator.throw(error);
      throw error;
    },
  };
}

async function metricsPlugin(app: FastifyInstance): Promise<void> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const subscriptions = new Gauge({
    name: 'graphql_active_subscriptions',
    help: 'GraphQL subscriptions open now (WebSocket and Server-Sent Events).',
    registers: [registry],
  });
  const compiledExecutions = new Counter({
    name: 'graphql_compiled_executions_total',
    help: 'GraphQL queries run compiled (graphql-jit), by the executor whose answer was sent: compiled, or graphql-js when the compiled answer had an error.',
    labelNames: ['answered_by'] as const,
    registers: [registry],
  });
  const mailMessages = new Counter({
    name: 'mail_messages_total',
    help: 'Messages of the mail outbox by kind and outcome: sent, skipped (nothing to send at its turn), failed (every attempt), dropped (over its budget or beyond MAIL_QUEUE_MAX).',
    labelNames: ['kind', 'outcome'] as const,
    registers: [registry],
  });
  let mailPending: (() => Promise<number>) | undefined;
  new Gauge({
    name: 'mail_outbox_pending',
    help: 'Messages waiting in the mail outbox (every instance), at most MAIL_QUEUE_MAX.',
    registers: [registry],
    async collect() {
      this.set(mailPending ? await withTimeout(mailPending(), DB_PING_TIMEOUT_MS).catch(() => 0) : 0);
    },
  });
  const db = app.db;
  if (db.poolStats()) {
    // PostgreSQL only (PGlite has one in-process connection and no pool): read from the pool at scrape time. Before
    // db_up (a scrape collects in registration order): its ping would otherwise be counted as a request waiting for a
    // connection (pg-pool hands an idle connection over on the next tick).
    new Gauge({
      name: 'db_pool_connections',
      help: 'Database pool: connections open (total, busy or idle), idle ones, and requests waiting for one.',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const stats = db.poolStats();
        this.reset();
        if (!stats) return;
        this.set({ state: 'total' }, stats.total);
        this.set({ state: 'idle' }, stats.idle);
        this.set({ state: 'waiting' }, stats.waiting);
      },
    });
    new Gauge({
      name: 'db_pool_max',
      help: 'Database pool: most connections it opens at once (DATABASE_POOL_MAX).',
      registers: [registry],
      collect() {
        this.set(db.poolStats()?.max ?? 0);
      },
    });
  }

  new Gauge({
    name: 'db_up',
    help: 'Whether the database answered a trivial query at scrape time (1) or not within 1 s (0).',
    labelNames: ['kind'] as const,
    registers: [registry],
    async collect() {
      let up = 1;
      try {
        await withTimeout(db.ping(), DB_PING_TIMEOUT_MS);
      } catch {
        up = 0;
      }
      this.reset();
      this.set({ kind: db.kind }, up);
    },
  });

  const redis = app.sharedState.redis;
  if (redis) {
    // With REDIS_URL only: whether the command client is connected now (the state the security checks depend on).
    new Gauge({
      name: 'redis_up',
      help: 'Whether the shared-state Redis (REDIS_URL) is connected (1) or not (0); while 0, Bearer, logout and signed requests get 503.',
      registers: [registry],
      collect() {
        this.set(redis.isUp() ? 1 : 0);
      },
    });
  }

  app.addHook('onResponse', (request, reply, done) => {
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? UNMATCHED_ROUTE,
      status: String(reply.statusCode),
    };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
    done();
  });

  app.decorate('metrics', {
    registry,
    subscriptionsPlugin: {
      onSubscribe: () => ({
        onSubscribeResult: ({ result, setResult }) => {
          if (isAsyncIterable(result)) setResult(counted(result, subscriptions));
        },
      }),
    },
    countCompiledExecution: (answeredBy) => compiledExecutions.inc({ answered_by: answeredBy }),
    countMail: (outcome, kind) => mailMessages.inc({ kind, outcome }),
    watchMailOutbox: (pending) => {
      mailPending = pending;
    },
  } satisfies Metrics);

  serveMetrics(app, registry);
}

/** `Authorization: Bearer <token>` compared in constant time (the token is a secret). */
function presentsToken(header: string | undefined, token: string): boolean {
  const match = /^Bearer +(\S+)\s*$/i.exec(header ?? '');
  if (!match) return false;
  const given = createHash('sha256').update(match[1]!).digest();
  return timingSafeEqual(given, createHash('sha256').update(token).digest());
}

/**
 * Where /metrics is served (quiet by default: it tells the process's inner state): with METRICS_PORT on a listener of
 * its own only (bound to METRICS_HOST, by default 127.0.0.1: a port of its own is no credential), with METRICS_TOKEN on the main port to that Bearer token only
 * (and on the metrics port too when both are set); with neither, nowhere (404), and the start-up log says how to enable.
 */
function serveMetrics(app: FastifyInstance, registry: Registry): void {
  const { token, port, host } = app.config.metrics;
  const authorized = (header: string | undefined) => token === undefined || presentsToken(header, token);
  if (port !== undefined) {
    const server = createServer((req, res) => {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found\n');
      } else if (!authorized(req.headers.authorization)) {
        res
          .writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer realm="metrics"', 'cache-control': 'no-store' })
          .end('Unauthorized\n');
      } else {
        registry.metrics().then(
          (text) => res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' }).end(text),
          (error: unknown) => {
            app.log.error({ err: error }, 'metrics not collected');
            res.writeHead(500, { 'content-type': 'text/plain' }).end('Metrics not collected\n');
          },
        );
      }
    });
    app.decorate('metricsServer', server);
    // With the main server: opened when it listens (app.inject alone opens no port), closed with the app.
    app.addHook('onListen', async () => {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host ?? '127.0.0.1', () => resolve());
      });
      app.log.info({ address: server.address() }, 'metrics served on their own port (METRICS_PORT)');
    });
    app.addHook('onClose', async () => {
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    return;
  }
  if (token === undefined) {
    app.addHook('onReady', async () => {
      app.log.info('GET /metrics is not served: set METRICS_TOKEN (Bearer token on this port) or METRICS_PORT (a port of its own) to enable it');
    });
    return;
  }
  app.get('/metrics', {
    schema: { hide: true },
    // The metrics token is not a user credential: checked here, then removed so that authentication (which would
    // refuse it as a malformed access token) sees an anonymous scrape.
    onRequest: async (request) => {
      if (!authorized(request.headers.authorization))
        throw new AppError('UNAUTHENTICATED', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>');
      delete request.headers.authorization;
    },
    handler: async (_request, reply) =>
      reply
        .header('cache-control', 'no-store')
        .type(registry.contentType)
        .send(await registry.metrics()),
  });
}

export default fp(metricsPlugin, { name: 'metrics', dependencies: ['database', 'shared-state'] });
