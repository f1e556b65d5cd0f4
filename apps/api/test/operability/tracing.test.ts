// OpenTelemetry traces (plugins/tracing.ts, graphql/tracing.ts), read from the SDK's in-memory exporter: the span tree
// of one REST and one GraphQL request, the caller's `traceparent` continued, the request id on the request span, the
// trace ids in the request's log lines, and nothing recorded that a trace store must not hold.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createTestDatabase } from '@users-posts/db/testing';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { createAccount, type Account } from '../support/accounts.js';
import { LocalOidcProvider } from '../support/oidc.js';
import { testConfig } from '../support/config.js';

const exporter = new InMemorySpanExporter();
let app: FastifyInstance;
let author: Account;
const logLines: string[] = [];

/** A caller's trace: W3C traceparent with a fixed trace and parent span id. */
const CALLER_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${CALLER_TRACE_ID}-${CALLER_SPAN_ID}-01`;

let provider: LocalOidcProvider;

beforeAll(async () => {
  provider = await LocalOidcProvider.start();
  app = await buildApp(
    testConfig({ tracing: { serviceName: 'users-posts-test' }, logLevel: 'info', oauthProviders: [provider.providerConfig('local')] }),
    {
      database: await createTestDatabase(),
      spanExporter: exporter,
    },
  );
  (app.log as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] = { write: (line: string) => void logLines.push(line) };
  author = await createAccount(app, 'traced@example.com');
  await app.db.prisma.post.create({ data: { title: 'Traced post', content: 'x', authorId: author.id } });
});
afterAll(async () => {
  await app?.close();
  await provider?.stop();
});

/** The spans of one trace, and a way to name a span's ancestors (its parent chain up to the root). */
function traceOf(traceId: string) {
  const spans = exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
  const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]));
  const parentOf = (span: ReadableSpan) => byId.get(span.parentSpanContext?.spanId ?? '');
  const ancestors = (span: ReadableSpan) => {
    const names: string[] = [];
    for (let at = parentOf(span); at; at = parentOf(at)) names.push(at.name);
    return names;
  };
  const named = (name: string | RegExp) => spans.filter((span) => (typeof name === 'string' ? span.name === name : name.test(span.name)));
  return { spans, ancestors, named, parentOf };
}

describe('traces', () => {
  it("REST: the request span continues the caller's traceparent; the operation's span, named by its operationId, holds the Prisma spans", async () => {
    exporter.reset();
    const response = await app.inject({ method: 'GET', url: `/api/v1/users/${author.id}`, headers: { traceparent: TRACEPARENT } });
    expect(response.statusCode).toBe(200);
    const { spans, named, ancestors } = traceOf(CALLER_TRACE_ID);

    const [request] = named('GET /api/v1/users/:id');
    expect(request).toBeDefined();
    expect(request!.parentSpanContext?.spanId).toBe(CALLER_SPAN_ID);
    expect(request!.attributes['http.request.id']).toBe(response.headers['x-request-id']);
    expect(request!.attributes['http.response.status_code']).toBe(200);

    const [operation] = named('getUser');
    expect(operation?.attributes['rest.operation_id']).toBe('getUser');
    expect(ancestors(operation!)).toEqual(['GET /api/v1/users/:id']);

    const queries = named(/^prisma:/);
    expect(queries.length).toBeGreaterThan(0);
    for (const query of queries) expect(ancestors(query)).toContain('getUser');
    expect(spans.every((span) => span.resource.attributes['service.name'] === 'users-posts-test')).toBe(true);
  });

  it('GraphQL: parse, validate, the operation, its non-trivial fields and their Prisma spans, under the request span', async () => {
    exporter.reset();
    const response = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', traceparent: TRACEPARENT },
      payload: { query: 'query Authors($limit: Int) { users(limit: $limit) { id name posts { id title } } }', variables: { limit: 5 } },
    });
    expect(response.json()).toMatchObject({ data: { users: [{ name: 'traced', posts: [{ title: 'Traced post' }] }] } });
    const { named, ancestors } = traceOf(CALLER_TRACE_ID);

    expect(named('POST /graphql')[0]?.parentSpanContext?.spanId).toBe(CALLER_SPAN_ID);
    for (const step of ['graphql.parse', 'graphql.validate']) expect(ancestors(named(step)[0]!)).toContain('POST /graphql');
    const [operation] = named('query.Authors');
    expect(ancestors(operation!)).toContain('POST /graphql');
    // The document is kept (no literal values in it), the variables are not.
    expect(operation!.attributes['graphql.document']).toContain('users(limit: $limit)');
    expect(JSON.stringify(operation!.attributes)).not.toContain('"limit":5');

    expect(ancestors(named('Query.users')[0]!)).toContain('query.Authors');
    expect(ancestors(named('User.posts')[0]!)).toContain('query.Authors');
    expect(named('User.name')).toEqual([]); // a property read: not a span
    const queries = named(/^prisma:/);
    expect(queries.length).toBeGreaterThan(0);
    for (const query of queries) expect(ancestors(query)).toContain('query.Authors');
  });

  it('keeps credentials out of the trace store: a mutation with an inline password records no document and no arguments', async () => {
    exporter.reset();
    const response = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', traceparent: TRACEPARENT },
      payload: {
        query: 'mutation { createUser(input: { name: "Trace", email: "trace-secret@example.com", password: "hunter2-secret-pw" }) { id } }',
      },
    });
    expect(response.json()).toMatchObject({ data: { createUser: { id: expect.any(String) } } });
    const { spans } = traceOf(CALLER_TRACE_ID);
    expect(spans.length).toBeGreaterThan(3);
    const recorded = JSON.stringify(spans.map((span) => ({ name: span.name, attributes: span.attributes, events: span.events })));
    expect(recorded).not.toContain('hunter2-secret-pw');
  });

  it('keeps credentials out of the trace store: a variable that fails coercion (graphql-js echoes it whole) is recorded as a code', async () => {
    exporter.reset();
    const response = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', traceparent: TRACEPARENT },
      payload: {
        query: 'mutation SignUp($input: CreateUserInput!) { createUser(input: $input) { id } }',
        variables: { input: { name: 'Typo', email: 'typo@example.com', password: 'hunter3-secret-pw', nmae: 1 } },
      },
    });
    expect(JSON.stringify(response.json())).toContain('hunter3-secret-pw'); // the caller's own answer echoes it, as graphql-js does
    const { spans, named } = traceOf(CALLER_TRACE_ID);
    expect(named('mutation.SignUp')[0]?.attributes['graphql.error.codes']).toEqual(['BAD_USER_INPUT']);
    const recorded = JSON.stringify(
      spans.map((span) => ({ name: span.name, attributes: span.attributes, events: span.events, status: span.status })),
    );
    expect(recorded).not.toContain('hunter3-secret-pw');
  });

  it('keeps credentials out of the trace store: an API key in the query string is not in the request span', async () => {
    exporter.reset();
    await app.inject({
      method: 'GET',
      url: '/api/v1/users?limit=1&api_key=up_secret-key-material-0123456789',
      headers: { traceparent: TRACEPARENT },
    });
    const { spans, named } = traceOf(CALLER_TRACE_ID);
    expect(named('GET /api/v1/users')[0]?.attributes['url.path']).toBe('/api/v1/users');
    expect(JSON.stringify(spans.map((span) => span.attributes))).not.toContain('secret-key-material');
  });

  it("an outgoing call to the OIDC provider (its discovery document) is a client span of the request's trace", async () => {
    exporter.reset();
    const response = await app.inject({ method: 'GET', url: '/auth/oauth/local/authorize', headers: { traceparent: TRACEPARENT } });
    expect(response.statusCode).toBe(302);
    const { spans, ancestors } = traceOf(CALLER_TRACE_ID);
    const outgoing = spans.filter((span) => String(span.attributes['url.full'] ?? '').startsWith(provider.url));
    expect(outgoing.map((span) => span.attributes['url.full'])).toContain(`${provider.url}/.well-known/openid-configuration`);
    for (const call of outgoing) expect(ancestors(call)).toContain('GET /auth/oauth/:provider/authorize');
  });

  it("writes the request's trace and span ids into its log lines", async () => {
    logLines.length = 0;
    const response = await app.inject({ method: 'GET', url: '/api/v1/users?limit=1', headers: { traceparent: TRACEPARENT } });
    expect(response.statusCode).toBe(200);
    const lines = logLines.map((line) => JSON.parse(line) as { reqId?: string; traceId?: string; msg?: string });
    // Fastify writes "incoming request" as it routes, before the request span exists; every later line names it.
    const own = lines.filter((line) => line.reqId === response.headers['x-request-id'] && line.msg !== 'incoming request');
    expect(own.map((line) => line.msg)).toContain('request completed');
    for (const line of own) expect(line.traceId).toBe(CALLER_TRACE_ID);
  });

  it('traces a request whose caller asks not to sample it (traceparent flag 00): a caller cannot hide its requests', async () => {
    exporter.reset();
    await app.inject({ method: 'GET', url: `/api/v1/users/${author.id}`, headers: { traceparent: `00-${CALLER_TRACE_ID}-${CALLER_SPAN_ID}-00` } });
    const { named } = traceOf(CALLER_TRACE_ID);
    expect(named('GET /api/v1/users/:id')).toHaveLength(1);
    expect(named('getUser')).toHaveLength(1);
  });

  it('starts a new trace for a request without traceparent, and refuses a malformed one by starting fresh', async () => {
    exporter.reset();
    await app.inject({ method: 'GET', url: '/api/v1/users?limit=1', headers: { traceparent: '00-zz-not-a-trace-01' } });
    const [request] = exporter.getFinishedSpans().filter((span) => span.name === 'GET /api/v1/users');
    expect(request).toBeDefined();
    expect(request!.parentSpanContext).toBeUndefined();
    expect(request!.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
  });
});
