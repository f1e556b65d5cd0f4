// OpenTelemetry traces (on with OTEL_EXPORTER_OTLP_ENDPOINT; this module is not even loaded otherwise): the SDK's
// tracer provider and OTLP exporter, W3C `traceparent` propagation in and out, one span tree per request (Fastify's
// request and hook spans by @fastify/otel, REST operations named by their operationId, GraphQL's by
// graphql/tracing.ts), and the spans of what a request waits on: Prisma, Redis (ioredis) and outgoing HTTP (the OIDC
// provider's, by undici's diagnostics channels). Log lines written inside a request carry its trace and span ids.
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { context, propagation, SpanKind, SpanStatusCode, trace, type TracerProvider } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { PrismaInstrumentation } from '@prisma/instrumentation';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Redis } from 'ioredis';

declare module 'fastify' {
  interface FastifyInstance {
    /** The tracer provider, when traces are on (GraphQL's plugins take their tracer from it). */
    tracerProvider?: TracerProvider;
  }
  interface FastifyContextConfig {
    /** The contract's operationId of a REST route: the name of its handler's span. */
    operationId?: string;
  }
}

export interface TracingOptions {
  serviceName: string;
  /** Where spans go instead of OTLP (tests: the SDK's in-memory exporter), each exported as it ends. */
  exporter?: SpanExporter;
}

/** The ids a log line written inside a traced request carries (pino's mixin), to find the trace from the log and back. */
export function traceLogFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}

async function tracingPlugin(app: FastifyInstance, options: TracingOptions): Promise<void> {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: options.serviceName,
      [ATTR_SERVICE_VERSION]: process.env.npm_package_version ?? '0.1.0',
    }),
    // Batched to the OTLP endpoint (the exporter reads OTEL_EXPORTER_OTLP_* itself); off the request path either way.
    spanProcessors: [options.exporter ? new SimpleSpanProcessor(options.exporter) : new BatchSpanProcessor(new OTLPTraceExporter())],
    // Every request is traced, whatever the caller's `traceparent` says: the SDK's default follows the caller's sampled
    // flag, so `…-00` would keep a request (its database and Redis calls included) out of the traces. The caller's
    // trace is still continued. OTEL_TRACES_SAMPLER (e.g. a ratio) is the operator's choice and replaces this.
    ...(process.env.OTEL_TRACES_SAMPLER ? {} : { sampler: new AlwaysOnSampler() }),
  });
  // The AsyncLocalStorage context manager (a span follows its request across awaits) and W3C trace context.
  provider.register({ propagator: new W3CTraceContextPropagator() });

  const prisma = new PrismaInstrumentation();
  const undici = new UndiciInstrumentation();
  // The command's name only: its arguments hold keys and values (client addresses, nonces) a trace store need not keep.
  const redis = new IORedisInstrumentation({ dbStatementSerializer: (command) => command });
  for (const instrumentation of [prisma, undici, redis]) {
    instrumentation.setTracerProvider(provider);
    instrumentation.enable();
  }
  // The server is one bundle (scripts/build.mjs): no module loading for the instrumentation's require hook to catch,
  // so ioredis' class is patched in place, as the hook would have patched it.
  const redisModules = redis.getModuleDefinitions();
  for (const definition of redisModules) definition.patch?.(Redis);

  const fastify = new FastifyOtelInstrumentation({
    registerOnInitialization: false,
    requestHook: (span, request: FastifyRequest) => {
      span.updateName(`${request.method} ${request.routeOptions.url ?? 'unmatched'}`);
      span.setAttribute('http.request.id', request.id);
      // The path without its query, as in the logs: `?api_key=` and a signed request's signature are credentials.
      span.setAttribute('url.path', request.url.split('?')[0]!);
      // Every later line of the request's log names its trace (Fastify's "incoming request" line is written before).
      const { traceId, spanId } = span.spanContext();
      request.log = request.log.child({ traceId, spanId });
    },
    // Only the handler among the hooks: a span per hook (a dozen per request) would bury what a request waited on.
    instrumentHooks: false,
    lifecycleHook: (span, info) => {
      const operationId = info.hookName === 'handler' ? info.request.routeOptions.config.operationId : undefined;
      if (operationId) {
        span.updateName(operationId);
        span.setAttribute('rest.operation_id', operationId);
      }
    },
  });
  // The hot reads that skip the Prisma client (packages/db sql-reader.ts) get the span Prisma would have given them.
  const tracer = provider.getTracer('users-posts-db');
  const reader = app.db.sql;
  reader.around = (sql, run) =>
    tracer.startActiveSpan(
      'prisma:engine:db_query',
      { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'postgresql', 'db.query.text': sql } },
      async (span) => {
        try {
          return await run();
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
          throw error;
        } finally {
          span.end();
        }
      },
    );

  fastify.setTracerProvider(provider);
  await app.register(fastify.plugin());
  app.decorate('tracerProvider', provider);

  app.addHook('onClose', async () => {
    reader.around = undefined;
    for (const definition of redisModules) definition.unpatch?.(Redis);
    for (const instrumentation of [prisma, undici, redis, fastify]) instrumentation.disable();
    // Spans still batched are sent before the process ends.
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  });
}

export default fp(tracingPlugin, { name: 'tracing', dependencies: ['database'] });
