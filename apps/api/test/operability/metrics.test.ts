// Operability (SPEC §5): GET /metrics in Prometheus text (request counts and latencies by route pattern, process
// metrics, database reachability and pool, open GraphQL subscriptions), helmet's security headers on every kind of response,
// and CORS only for the origins of CORS_ORIGINS (with credentials).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { mkdtempSync } from 'node:fs';
import { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';
import { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/config.js';
import { GRAPHIQL_CSP } from '../../src/plugins/security-headers.js';
import { createTestApp } from '../support/app.js';
import { listen, SseStream } from '../support/ws.js';

const ALLOWED = 'https://app.example.com';
const OTHER = 'https://evil.example.com';

let app: FastifyInstance;
let urls: { http: string; ws: string };

beforeAll(async () => {
  app = await createTestApp();
  urls = await listen(app);
});
afterAll(() => app.close());

/** The value of the sample `name` whose labels include every one of `labels`, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) return Number(match[3]);
  }
  return undefined;
}

/** A scrape with testConfig's metrics token (without one, /metrics is refused: test/adversary/quiet-defaults.test.ts). */
const METRICS_SCRAPE = { method: 'GET' as const, url: '/metrics', headers: { authorization: 'Bearer test-metrics-token-0123456789' } };

async function scrape(): Promise<string> {
  const response = await app.inject(METRICS_SCRAPE);
  expect(response.statusCode).toBe(200);
  return response.body;
}

async function until(predicate: (text: string) => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    if (predicate(await scrape())) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('GET /metrics', () => {
  it('answers Prometheus text format 0.0.4', async () => {
    const response = await app.inject(METRICS_SCRAPE);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(response.body).toMatch(/^# HELP http_requests_total /m);
    expect(response.body).toMatch(/^# TYPE http_request_duration_seconds histogram$/m);
  });

  it('counts real requests by method, route pattern and status, with a latency histogram', async () => {
    const users = { method: 'GET', route: '/api/v1/users', status: '200' };
    const before = sample(await scrape(), 'http_requests_total', users) ?? 0;
    for (let i = 0; i < 3; i += 1) expect((await app.inject({ method: 'GET', url: `/api/v1/users?page=${i + 1}` })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/api/v1/users/987654321' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/no-such-page-31337' })).statusCode).toBe(404);

    const text = await scrape();
    expect(sample(text, 'http_requests_total', users)).toBe(before + 3);
    expect(sample(text, 'http_request_duration_seconds_count', users)).toBe(before + 3);
    expect(sample(text, 'http_request_duration_seconds_bucket', { ...users, le: '+Inf' })).toBe(before + 3);
    expect(sample(text, 'http_request_duration_seconds_sum', users)).toBeGreaterThan(0);
    // The route pattern, never the raw URL: ids, query strings and unknown paths stay out of the label values.
    expect(sample(text, 'http_requests_total', { method: 'GET', route: '/api/v1/users/:id', status: '404' })).toBe(1);
    expect(sample(text, 'http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(text).not.toContain('987654321');
    expect(text).not.toContain('no-such-page');
    expect(text).not.toContain('page=');
  });

  it('includes default process metrics and database reachability', async () => {
    const text = await scrape();
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sample(text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(sample(text, 'db_up', { kind: app.db.kind })).toBe(1);
  });

  it('includes the PostgreSQL pool: open, idle and waiting connections and the cap (none on PGlite, which has no pool)', async () => {
    if (app.db.kind === 'pglite') {
      const text = await scrape();
      expect(text).not.toMatch(/^db_pool_/m);
      return;
    }
    const state = (text: string, name: string) => sample(text, 'db_pool_connections', { state: name });
    // Twelve queries of three seconds each on a pool of ten: ten connections busy, two requests (and the scrape's own
    // db_up ping) waiting for one. Three seconds, not one: on a loaded CI machine the scrapes below took long enough that
    // the first queries had ended and a connection was seen idle between two of them. `.then` starts them: Prisma
    // queries are lazy.
    const busy = Array.from({ length: 12 }, () => app.db.prisma.$queryRaw`SELECT pg_sleep(3)::text`.then(() => undefined));
    try {
      await until((text) => (state(text, 'waiting') ?? 0) >= 2, 'two requests waiting for a connection');
      const text = await scrape();
      expect(sample(text, 'db_pool_max')).toBe(10);
      expect(state(text, 'total')).toBe(10);
      expect(state(text, 'idle')).toBe(0);
    } finally {
      await Promise.all(busy);
    }
    const text = await scrape();
    expect(state(text, 'waiting')).toBe(0);
    expect(state(text, 'idle')).toBe(state(text, 'total'));
    expect(state(text, 'total')).toBeGreaterThan(0);
  });

  it('counts an open SSE subscription in graphql_active_subscriptions until the client goes away', async () => {
    const active = (text: string) => sample(text, 'graphql_active_subscriptions');
    expect(active(await scrape())).toBe(0);
    const stream = await SseStream.open(`${urls.http}/graphql?query=${encodeURIComponent('subscription{postCreated{id}}')}`);
    try {
      expect(stream.response.status).toBe(200);
      await until((text) => active(text) === 1, 'the gauge to reach 1');
    } finally {
      stream.close();
    }
    await until((text) => active(text) === 0, 'the gauge to return to 0');
  });

  it('keeps registries apart between app instances', async () => {
    const other = await createTestApp();
    try {
      const text = (await other.inject(METRICS_SCRAPE)).body;
      expect(sample(text, 'http_requests_total', { method: 'GET', route: '/api/v1/users', status: '200' })).toBeUndefined();
    } finally {
      await other.close();
    }
  });
});

describe('security headers (helmet)', () => {
  const expectHelmet = (headers: Record<string, unknown>) => {
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(headers['strict-transport-security']).toMatch(/max-age=\d+/);
    expect(headers['referrer-policy']).toBe('no-referrer');
    expect(headers['cross-origin-opener-policy']).toBe('same-origin');
    expect(headers['content-security-policy']).toMatch(/default-src 'self'/);
    expect(headers['content-security-policy']).not.toMatch(/upgrade-insecure-requests/);
    expect(headers['x-powered-by']).toBeUndefined();
  };

  it('are set on REST, GraphQL, /metrics and 404 responses', async () => {
    const rest = await app.inject({ method: 'GET', url: '/api/v1/users' });
    const gql = await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ __typename }' } });
    const notFound = await app.inject({ method: 'GET', url: '/nowhere' });
    const metrics = await app.inject(METRICS_SCRAPE);
    expect([rest.statusCode, gql.statusCode, notFound.statusCode, metrics.statusCode]).toEqual([200, 200, 404, 200]);
    for (const response of [rest, gql, notFound, metrics]) expectHelmet(response.headers);
  });

  it('are exactly the headers helmet writes itself (run once at start, not per request)', async () => {
    // helmet's own middleware, with the product's options, on a real Node response.
    const response = new ServerResponse(new IncomingMessage(new Socket()));
    helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } })(response.req, response, () => undefined);
    const written = response.getHeaders();
    expect(Object.keys(written).length).toBeGreaterThan(10);
    const rest = await app.inject({ method: 'GET', url: '/api/v1/users' });
    const refused = await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{' } });
    for (const answer of [rest, refused])
      for (const [name, value] of Object.entries(written)) expect([name, answer.headers[name]]).toEqual([name, value]);
  });

  it('give GraphiQL (GET /graphql as HTML) the policy its page needs, and /docs the default one', async () => {
    const graphiql = await app.inject({ method: 'GET', url: '/graphql', headers: { accept: 'text/html' } });
    expect(graphiql.statusCode).toBe(200);
    expect(graphiql.headers['content-type']).toMatch(/^text\/html/);
    expect(graphiql.headers['content-security-policy']).toBe(GRAPHIQL_CSP);
    const docs = await app.inject({ method: 'GET', url: '/docs/' });
    expect(docs.statusCode).toBe(200);
    expectHelmet(docs.headers);
  });
});

describe('CORS', () => {
  let corsApp: FastifyInstance;
  beforeAll(async () => {
    corsApp = await createTestApp({ corsOrigins: [ALLOWED] });
  });
  afterAll(() => corsApp.close());

  const preflight = (target: FastifyInstance, url: string, origin: string) =>
    target.inject({
      method: 'OPTIONS',
      url,
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,authorization' },
    });

  it('answers a preflight from a listed origin with that origin and credentials allowed', async () => {
    for (const url of ['/api/v1/users', '/graphql', '/login']) {
      const response = await preflight(corsApp, url, ALLOWED);
      expect(response.statusCode).toBe(204);
      expect(response.headers['access-control-allow-origin']).toBe(ALLOWED);
      expect(response.headers['access-control-allow-credentials']).toBe('true');
      expect(String(response.headers['access-control-allow-methods'])).toContain('POST');
    }
  });

  it('adds the headers to actual requests from a listed origin', async () => {
    const rest = await corsApp.inject({ method: 'GET', url: '/api/v1/users', headers: { origin: ALLOWED } });
    const gql = await corsApp.inject({ method: 'POST', url: '/graphql', headers: { origin: ALLOWED }, payload: { query: '{ __typename }' } });
    for (const response of [rest, gql]) {
      expect(response.headers['access-control-allow-origin']).toBe(ALLOWED);
      expect(response.headers['access-control-allow-credentials']).toBe('true');
    }
  });

  it('gives an unlisted origin no CORS headers', async () => {
    for (const url of ['/api/v1/users', '/graphql']) {
      const response = await preflight(corsApp, url, OTHER);
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
      expect(response.headers['access-control-allow-credentials']).toBeUndefined();
    }
    const gql = await corsApp.inject({ method: 'POST', url: '/graphql', headers: { origin: OTHER }, payload: { query: '{ __typename }' } });
    expect(gql.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('is off by default: no CORS headers for anyone, on REST and GraphQL alike', async () => {
    for (const url of ['/api/v1/users', '/graphql']) {
      const response = await preflight(app, url, ALLOWED);
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
    }
    const gql = await app.inject({ method: 'POST', url: '/graphql', headers: { origin: OTHER }, payload: { query: '{ __typename }' } });
    expect(gql.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('reads CORS_ORIGINS as a comma-separated list of origins', () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'users-posts-cors-'));
    expect(loadConfig({ DATA_DIR: dataDir }).corsOrigins).toEqual([]);
    expect(loadConfig({ DATA_DIR: dataDir, CORS_ORIGINS: ' https://app.example.com, http://localhost:5173/ ' }).corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ]);
    expect(() => loadConfig({ DATA_DIR: dataDir, CORS_ORIGINS: '*' })).toThrow(/CORS_ORIGINS/);
  });
});
