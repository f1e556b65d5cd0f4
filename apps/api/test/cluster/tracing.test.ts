// Traces as an operator receives them: the product started with OTEL_EXPORTER_OTLP_ENDPOINT pointing at an in-process
// OTLP/HTTP receiver, on PostgreSQL and Redis. One REST and one GraphQL request, each continuing the caller's
// traceparent, arrive as span trees holding their database statements and their Redis commands.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, signUp, startCluster, type Cluster } from '../support/cluster.js';
import { describeWithServers } from '../support/processes.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
}

/** An OTLP/HTTP (JSON) trace receiver: every span it was sent, with its service name. */
async function startReceiver(): Promise<{ url: string; spans: (OtlpSpan & { service: string })[]; close(): Promise<void> }> {
  const spans: (OtlpSpan & { service: string })[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      if (request.url === '/v1/traces' && request.headers['content-type']?.includes('json')) {
        const payload = JSON.parse(body) as {
          resourceSpans: { resource: { attributes: OtlpSpan['attributes'] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
        };
        for (const resourceSpans of payload.resourceSpans) {
          const service = resourceSpans.resource.attributes?.find((attribute) => attribute.key === 'service.name')?.value.stringValue ?? '';
          for (const scope of resourceSpans.scopeSpans) for (const span of scope.spans) spans.push({ ...span, service });
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, spans, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const attribute = (span: OtlpSpan, key: string) => span.attributes?.find((entry) => entry.key === key)?.value;

describeWithServers('OpenTelemetry traces to an OTLP endpoint', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let cluster: Cluster;
  let base: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    cluster = await startCluster(1, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'users-posts-traced',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    base = cluster.instances[0]!.base;
  }, 180_000);
  afterAll(async () => {
    await cluster?.destroy();
    await receiver?.close();
  }, 60_000);

  /** The spans of one trace once `expected` names have all arrived (the exporter sends in batches). */
  async function spansOf(traceId: string, expected: string[]): Promise<OtlpSpan[]> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const spans = receiver.spans.filter((span) => span.traceId === traceId);
      if (expected.every((name) => spans.some((span) => span.name === name))) return spans;
      if (Date.now() > deadline)
        throw new Error(`trace ${traceId}: have ${spans.map((span) => span.name).join(', ')}; expected ${expected.join(', ')}`);
      await sleep(100);
    }
  }

  /** The names from a span up to the root of its trace. */
  const ancestry = (spans: OtlpSpan[], span: OtlpSpan) => {
    const names: string[] = [];
    for (let at = spans.find((s) => s.spanId === span.parentSpanId); at; at = spans.find((s) => s.spanId === at!.parentSpanId)) names.push(at.name);
    return names;
  };

  it("a REST request: its operation's span holds the PostgreSQL statements; its rate limit, a Redis command, is in the same trace", async () => {
    const member = await signUp(base, 'Traced');
    const traceId = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
    const answer = await call(base, 'GET', `/api/v1/users/${member.id}`, { headers: { traceparent: `00-${traceId}-1122334455667788-01` } });
    expect(answer.status).toBe(200);
    const spans = await spansOf(traceId, ['GET /api/v1/users/:id', 'getUser']);

    const request = spans.find((span) => span.name === 'GET /api/v1/users/:id')!;
    expect(request.parentSpanId).toBe('1122334455667788');
    expect(attribute(request, 'http.request.id')?.stringValue).toBe(answer.headers.get('x-request-id'));
    expect(spans.every((span) => receiver.spans.find((s) => s.spanId === span.spanId)?.service === 'users-posts-traced')).toBe(true);

    const statements = spans.filter((span) => span.name.startsWith('prisma:'));
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) expect(ancestry(spans, statement)).toContain('getUser');
    const redis = spans.filter((span) => attribute(span, 'db.system.name')?.stringValue === 'redis');
    expect(redis.length).toBeGreaterThan(0);
    for (const command of redis) expect(ancestry(spans, command)).toContain('GET /api/v1/users/:id');
  });

  it('a GraphQL mutation: parse, validate, the operation and the Prisma client spans of its write', async () => {
    const member = await signUp(base, 'Writer');
    const traceId = '0f1e2d3c4b5a69788796a5b4c3d2e1f0';
    const answer = await call(base, 'POST', '/graphql', {
      token: member.accessToken,
      headers: { traceparent: `00-${traceId}-8877665544332211-01` },
      body: {
        query: 'mutation Write($authorId: ID!) { createPost(title: "Traced", content: "x", authorId: $authorId) { id } }',
        variables: { authorId: String(member.id) },
      },
    });
    expect(answer.body.errors).toBeUndefined();
    const spans = await spansOf(traceId, ['POST /graphql', 'graphql.parse', 'graphql.validate', 'mutation.Write', 'Mutation.createPost']);
    const operation = spans.find((span) => span.name === 'mutation.Write')!;
    expect(ancestry(spans, operation)).toContain('POST /graphql');
    // The Prisma client's operations inside the mutation (the caller's credential was read before it, by the auth hook).
    const inside = spans.filter((span) => span.name === 'prisma:client:operation' && ancestry(spans, span).includes('mutation.Write'));
    expect(inside.map((span) => attribute(span, 'name')?.stringValue)).toContain('Post.create');
  });
});
