// Reconnaissance and ambient-credential attacks on a default deployment: leaked error details, open /metrics, CDN assets,
// cached private answers, 401s without a challenge, forged request ids, cross-site requests riding the session cookie,
// and slow or piled-up connections. Each proves nothing leaked, changed or stalled.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase } from '@users-posts/db/testing';
import type { FastifyInstance } from 'fastify';
import { mkdtempSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { GRAPHIQL_CSP } from '../../src/plugins/security-headers.js';
import { testConfig } from '../support/config.js';
import { createTestApp } from '../support/app.js';
import { accessTokenOf, bearer, createUser, login, PASSWORD, type TestUser } from '../support/auth.js';

const METRICS_TOKEN = 'test-metrics-token-0123456789';

async function listen(app: FastifyInstance): Promise<{ base: string; port: number }> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('not listening on TCP');
  return { base: `http://127.0.0.1:${address.port}`, port: address.port };
}

describe('error details without NODE_ENV=development (the default mode)', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    // The real configuration path with no NODE_ENV: development secrets, but masked errors.
    const config = loadConfig({ DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'users-posts-quiet-')), LOG_LEVEL: 'silent' });
    expect({ nodeEnv: config.nodeEnv, exposeErrors: config.exposeErrors }).toEqual({ nodeEnv: 'development', exposeErrors: false });
    app = await buildApp(config, { database: await createTestDatabase() });
    // An unexpected database failure: its message names the table and the query.
    await app.db.prisma.$executeRawUnsafe('ALTER TABLE comments RENAME TO comments_gone');
  });
  afterAll(() => app.close());

  it('REST: a 500 says only "Internal server error"-like text, no table, query or path', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/v1/comments' });
    expect(response.statusCode).toBe(500);
    expect(response.body).not.toMatch(/comments|SELECT|prisma|\.ts|\/work\/|at /i);
    expect(response.json()).toEqual({ code: 50000, message: expect.any(String) });
  });

  it('GraphQL: the error is masked', async () => {
    const response = await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ posts { id comments { id } } }' } });
    expect(response.body).not.toMatch(/comments_gone|relation|SELECT|prisma|\.ts|stack/i);
  });

  it('NODE_ENV=development, set explicitly, is what exposes them', () => {
    const config = loadConfig({ DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'users-posts-quiet-')), NODE_ENV: 'development' });
    expect(config.exposeErrors).toBe(true);
  });
});

describe('/metrics reconnaissance', () => {
  it('with METRICS_TOKEN: refused without the token or with a wrong one, served with it', async () => {
    const app = await createTestApp();
    try {
      const none = await app.inject({ method: 'GET', url: '/metrics' });
      expect(none.statusCode).toBe(401);
      expect(none.headers['www-authenticate']).toMatch(/^Bearer /);
      expect(none.body).not.toMatch(/http_requests_total/);
      const wrong = await app.inject({ method: 'GET', url: '/metrics', headers: bearer('test-metrics-token-0123456788') });
      expect(wrong.statusCode).toBe(401);
      const right = await app.inject({ method: 'GET', url: '/metrics', headers: bearer(METRICS_TOKEN) });
      expect(right.statusCode).toBe(200);
      expect(right.body).toMatch(/^# HELP http_requests_total /m);
      expect(right.headers['cache-control']).toBe('no-store');
    } finally {
      await app.close();
    }
  });

  it('with neither METRICS_TOKEN nor METRICS_PORT: not served at all', async () => {
    const app = await createTestApp({ metrics: {} });
    try {
      expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
      // The former token is then no credential at all (refused as a bearer token), and nothing is scraped.
      const withToken = await app.inject({ method: 'GET', url: '/metrics', headers: bearer(METRICS_TOKEN) });
      expect([401, 404]).toContain(withToken.statusCode);
      expect(withToken.body).not.toMatch(/http_requests_total/);
    } finally {
      await app.close();
    }
  });

  it('with METRICS_PORT: served on that port only, not on the main one', async () => {
    const app = await createTestApp({ metrics: { port: 0, host: '127.0.0.1' } });
    try {
      const { base } = await listen(app);
      expect((await fetch(`${base}/metrics`)).status).toBe(404);
      const address = app.metricsServer!.address();
      if (!address || typeof address === 'string') throw new Error('metrics port not listening');
      const scraped = await fetch(`http://127.0.0.1:${address.port}/metrics`);
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toMatch(/^# HELP http_requests_total /m);
      expect((await fetch(`http://127.0.0.1:${address.port}/api/v1/users`)).status).toBe(404);
    } finally {
      await app.close();
    }
    expect(app.metricsServer!.listening).toBe(false);
  });
});

describe('GraphiQL assets from a third-party CDN', () => {
  it('the page and its CSP reference no external host', async () => {
    const app = await createTestApp();
    try {
      const page = await app.inject({ method: 'GET', url: '/graphql', headers: { accept: 'text/html' } });
      expect(page.statusCode).toBe(200);
      expect(page.body).toMatch(/graphiql/i);
      // No script, style, link or font loaded from elsewhere (URLs inside the bundled code's strings are not loads).
      expect(page.body).not.toMatch(/<(script|link|img)[^>]+(src|href)=["']?(https?:)?\/\//i);
      expect(page.body).not.toMatch(/unpkg\.com|jsdelivr|cdnjs/);
      expect(page.headers['content-security-policy']).toBe(GRAPHIQL_CSP);
      expect(GRAPHIQL_CSP).not.toMatch(/https?:|unpkg/);
    } finally {
      await app.close();
    }
  });
});

describe('private answers kept by caches', () => {
  let app: FastifyInstance;
  let ada: TestUser;
  beforeAll(async () => {
    app = await createTestApp();
    ada = await createUser(app, { email: 'ada@example.com' });
  });
  afterAll(() => app.close());

  it('every authenticated answer, and every answer carrying credentials, is Cache-Control: no-store', async () => {
    const loginResponse = await login(app, { email: ada.email, password: PASSWORD });
    expect(loginResponse.headers['cache-control']).toBe('no-store');
    const { accessToken, refreshToken } = loginResponse.json() as { accessToken: string; refreshToken: string };
    const refreshed = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refreshToken } });
    expect(refreshed.headers['cache-control']).toBe('no-store');
    const session = await login(app, { email: ada.email, password: PASSWORD, session: true });
    expect(session.headers['cache-control']).toBe('no-store');

    const rest = await app.inject({ method: 'GET', url: `/api/v1/users/${ada.id}`, headers: bearer(accessToken) });
    const gql = await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ users { id email } }' }, headers: bearer(accessToken) });
    const notFound = await app.inject({ method: 'GET', url: '/api/v1/users/999999', headers: bearer(accessToken) });
    for (const response of [rest, gql, notFound]) expect(response.headers['cache-control']).toBe('no-store');
    // Anonymous public reads stay cacheable by the caller's choice (no no-store forced).
    expect((await app.inject({ method: 'GET', url: '/api/v1/users' })).headers['cache-control']).not.toBe('no-store');
  });
});

describe('401 without a challenge', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(() => app.close());

  it('REST: every 401 carries WWW-Authenticate, with error="invalid_token" when a bearer token failed', async () => {
    const none = await app.inject({ method: 'GET', url: '/api/v1/api-keys' });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="users-posts"');
    const forged = await app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: bearer('eyJhbGciOiJub25lIn0.e30.') });
    expect(forged.statusCode).toBe(401);
    expect(forged.headers['www-authenticate']).toBe('Bearer realm="users-posts", error="invalid_token"');
    const failedLogin = await login(app, { email: 'nobody@example.com', password: 'wrong password!' });
    expect(failedLogin.statusCode).toBe(401);
    expect(failedLogin.headers['www-authenticate']).toBe('Bearer realm="users-posts"');
  });

  it('GraphQL: a refused bearer token (401) carries it too', async () => {
    const response = await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ __typename }' }, headers: bearer('not-a-token') });
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer realm="users-posts", error="invalid_token"');
  });
});

describe('forged x-request-id (log injection, log flooding)', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(() => app.close());

  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  const idFor = async (id: string) => (await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': id } })).headers['x-request-id'];

  it('a short well-formed id is kept (tracing across services)', async () => {
    expect(await idFor('req-2026.11:abc_DEF')).toBe('req-2026.11:abc_DEF');
  });

  it('a 10 KB id, quotes, spaces, control characters and line separators are replaced by a fresh UUID', async () => {
    for (const forged of ['a'.repeat(10_000), 'x" injected="1', 'a b', 'id\tnext', '../../etc/passwd', 'a'.repeat(65)]) {
      expect(await idFor(forged)).toMatch(UUID);
    }
  });

  it('CR/LF sent raw on the wire reaches neither the response nor the logs', async () => {
    const { port } = await listen(app);
    const answer = await rawExchange(
      port,
      'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: abc\rlevel=fatal msg=forged\r\nConnection: close\r\n\r\n',
    );
    // Node refuses a bare CR inside a header value (400) before any handler runs; nothing echoes it back.
    expect(answer).not.toMatch(/level=fatal/);
  });
});

describe('cross-site request forgery with the session cookie', () => {
  let app: FastifyInstance;
  let ada: TestUser;
  let cookie: string;
  const posts = () => app.db.prisma.post.count();
  const write = (headers: Record<string, string>) =>
    app.inject({
      method: 'POST',
      url: `/api/v1/users/${ada.id}/posts`,
      payload: { title: 'csrf', content: 'planted' },
      headers: { host: 'api.example.com', ...headers },
    });

  beforeAll(async () => {
    app = await createTestApp({ corsOrigins: ['https://app.example.com'] });
    ada = await createUser(app, { email: 'ada@example.com' });
    const sid = (await login(app, { email: ada.email, password: PASSWORD, session: true })).cookies.find((c) => c.name === 'sid')!.value;
    cookie = `sid=${sid}`;
  });
  afterAll(() => app.close());

  it('a state-changing REST request from a foreign Origin is refused (403) and changes nothing', async () => {
    const before = await posts();
    const response = await write({ cookie, origin: 'https://evil.example' });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({ code: 40300 });
    expect(await write({ cookie, origin: 'null' }).then((r) => r.statusCode)).toBe(403);
    // A look-alike of this host on another port or as a suffix is foreign too.
    expect(await write({ cookie, origin: 'https://api.example.com.evil.example' }).then((r) => r.statusCode)).toBe(403);
    expect(await posts()).toBe(before);
  });

  it('without Origin, Sec-Fetch-Site: cross-site is refused too', async () => {
    const before = await posts();
    expect((await write({ cookie, 'sec-fetch-site': 'cross-site' })).statusCode).toBe(403);
    expect(await posts()).toBe(before);
  });

  it('GraphQL mutations over POST /graphql are refused the same way', async () => {
    const before = await posts();
    const response = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { host: 'api.example.com', cookie, origin: 'https://evil.example' },
      payload: { query: `mutation { createPost(title: "csrf", content: "planted", authorId: "${ada.id}") { id } }` },
    });
    expect(response.statusCode).toBe(403);
    expect(await posts()).toBe(before);
  });

  it('same origin, a CORS_ORIGINS origin and same-origin fetches without Origin are allowed; GET stays allowed from anywhere', async () => {
    expect((await write({ cookie, origin: 'https://api.example.com' })).statusCode).toBe(201);
    expect((await write({ cookie, origin: 'https://app.example.com' })).statusCode).toBe(201);
    expect((await write({ cookie, 'sec-fetch-site': 'same-origin' })).statusCode).toBe(201);
    const read = await app.inject({
      method: 'GET',
      url: `/api/v1/users/${ada.id}`,
      headers: { host: 'api.example.com', cookie, origin: 'https://evil.example' },
    });
    expect(read.statusCode).toBe(200);
  });

  it('a Bearer token is not ambient: the same request from a foreign Origin is served', async () => {
    const token = await accessTokenOf(app, ada);
    expect((await write({ ...bearer(token), origin: 'https://evil.example' })).statusCode).toBe(201);
  });
});

/** Sends `text` on a raw TCP connection and collects what comes back until the server closes it. */
function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('slow-loris and connection floods', () => {
  it('a client sending its headers byte by byte is cut after headersTimeout, while others are answered at once', async () => {
    const HEADERS_TIMEOUT_MS = 600;
    const app = await createTestApp({ http: { ...testConfig().http, headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: 5_000 } });
    try {
      const { port, base } = await listen(app);
      const startedAt = Date.now();
      const socket = connect(port, '127.0.0.1');
      let closedAt = 0;
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
      const closed = new Promise<void>((resolve) =>
        socket.on('close', () => {
          closedAt = Date.now();
          resolve();
        }),
      );
      socket.on('error', () => undefined);
      const drip = (async () => {
        const bytes = 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: ' + 'a'.repeat(200);
        for (const byte of bytes) {
          if (socket.destroyed || closedAt) return;
          socket.write(byte);
          await sleep(50);
        }
      })();

      // Meanwhile other clients are served quickly.
      const latencies: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        expect((await fetch(`${base}/healthz`)).status).toBe(200);
        latencies.push(performance.now() - t);
        await sleep(50);
      }
      await closed;
      await drip;
      const cutAfter = closedAt - startedAt;
      expect(cutAfter).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
      expect(cutAfter).toBeLessThan(HEADERS_TIMEOUT_MS + 1_500);
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer).toMatch(/"code":40800/);
      expect(Math.max(...latencies)).toBeLessThan(500);
    } finally {
      await app.close();
    }
  });

  it('a long-lived SSE subscription outlives requestTimeout (it bounds receiving the request, not the answer)', async () => {
    const app = await createTestApp({ http: { ...testConfig().http, headersTimeoutMs: 300, requestTimeoutMs: 600 } });
    try {
      const { base } = await listen(app);
      const controller = new AbortController();
      const response = await fetch(`${base}/graphql?query=${encodeURIComponent('subscription { postCreated { id } }')}`, {
        headers: { accept: 'text/event-stream' },
        signal: controller.signal,
      });
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      const ended = reader
        .read()
        .then((chunk) => chunk.done)
        .catch(() => true);
      const outcome = await Promise.race([ended, sleep(1_500).then(() => 'still open')]);
      // Yoga may send a keep-alive comment first; what matters is that the stream was not ended by the server.
      expect(outcome === 'still open' || outcome === false).toBe(true);
      controller.abort();
    } finally {
      await app.close();
    }
  });

  it('connections beyond HTTP_MAX_CONNECTIONS are closed at once; the open ones keep working', async () => {
    const app = await createTestApp({ http: { ...testConfig().http, maxConnections: 3 } });
    const sockets: Socket[] = [];
    try {
      const { port } = await listen(app);
      for (let i = 0; i < 3; i++) {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        await new Promise((resolve) => socket.once('connect', resolve));
        sockets.push(socket);
      }
      await sleep(100);
      const extra = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n').catch(() => '');
      expect(extra).toBe(''); // closed without an answer
      // One of the held connections is still served.
      const held = sockets[0]!;
      const answer = new Promise<string>((resolve) => held.once('data', (chunk) => resolve(chunk.toString('latin1'))));
      held.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(await answer).toMatch(/^HTTP\/1\.1 200/);
    } finally {
      for (const socket of sockets) socket.destroy();
      await app.close();
    }
  });
});
