// Rate limits (SPEC §4): headers of both conventions on every response, the default bucket per user (when
// authenticated) or per IP, 429 in the error envelope with Retry-After, and the stricter buckets' own numbers.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { createTestApp } from '../support/app.js';
import { createUser, login, PASSWORD } from '../support/auth.js';

type Response = LightMyRequestResponse;

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The five headers, consistent with each other, for a bucket of `limit` per `windowSeconds`. */
function expectRateLimitHeaders(response: Response, limit: number, remaining: number, windowSeconds: number) {
  const before = nowSeconds();
  const { headers } = response;
  expect(headers['x-ratelimit-limit']).toBe(String(limit));
  expect(headers['x-ratelimit-remaining']).toBe(String(remaining));
  const reset = Number(headers['x-ratelimit-reset']);
  expect(Number.isInteger(reset)).toBe(true);
  // Absolute unix seconds: within [now, now + window] (+1 for the rounding up of a partial second).
  expect(reset).toBeGreaterThanOrEqual(before - 1);
  expect(reset).toBeLessThanOrEqual(nowSeconds() + windowSeconds + 1);
  expect(headers['ratelimit-policy']).toBe(`${limit};w=${windowSeconds}`);
  const draft = /^limit=(\d+), remaining=(\d+), reset=(\d+)$/.exec(String(headers['ratelimit']));
  expect(draft).not.toBeNull();
  expect(Number(draft![1])).toBe(limit);
  expect(Number(draft![2])).toBe(remaining);
  // Seconds from now, agreeing with the absolute reset.
  expect(Math.abs(before + Number(draft![3]) - reset)).toBeLessThanOrEqual(2);
  expect(Number(draft![3])).toBeLessThanOrEqual(windowSeconds);
}

function expectRateLimited(response: Response, limit: number, windowSeconds: number, graphql = false) {
  expect(response.statusCode).toBe(429);
  expect(response.json()).toEqual(
    graphql
      ? { errors: [{ message: expect.any(String), extensions: { code: 'RATE_LIMITED' } }] } // GraphQL's error shape on /graphql
      : { code: 42900, message: expect.any(String) },
  );
  const retryAfter = Number(response.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
  expectRateLimitHeaders(response, limit, 0, windowSeconds);
}

describe('headers on every response (default bucket: 1000 per minute)', () => {
  let app: FastifyInstance;

  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(() => app.close());

  it('on REST successes and errors (404, 400, 422, 401, malformed JSON, bad version), unknown routes, GraphQL and the probes', async () => {
    const responses = [
      await app.inject({ method: 'GET', url: '/api/v1/users' }),
      await app.inject({ method: 'GET', url: '/api/v1/users/987654' }),
      await app.inject({ method: 'GET', url: '/api/v1/users/abc' }),
      await app.inject({ method: 'POST', url: '/api/v1/users', payload: { name: '' } }),
      await app.inject({ method: 'DELETE', url: '/api/v1/users/1' }),
      await app.inject({ method: 'GET', url: '/no/such/route' }),
      await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ __typename }' } }),
      await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ nope }' } }),
      await app.inject({ method: 'GET', url: '/healthz' }),
      await app.inject({ method: 'GET', url: '/readyz' }),
      await app.inject({ method: 'GET', url: '/api/v1/users', headers: { authorization: 'Bearer not-a-token' } }),
      await app.inject({ method: 'POST', url: '/api/v1/users', headers: { 'content-type': 'application/json' }, payload: '{"broken' }),
      await app.inject({ method: 'GET', url: '/api/users?version=9' }),
    ];
    expect(responses.map((r) => r.statusCode)).toEqual([200, 404, 400, 422, 401, 404, 200, 200, 200, 200, 401, 400, 400]);
    expect(responses[7]!.json().errors).toHaveLength(1);
    responses.forEach((response, index) => expectRateLimitHeaders(response, 1000, 1000 - index - 1, 60));
  });
});

describe('the default bucket (RATE_LIMIT_MAX = 3, 10 s window)', () => {
  let app: FastifyInstance;
  let ada: { id: number; headers: { authorization: string } };
  let bob: { id: number; headers: { authorization: string } };

  beforeAll(async () => {
    app = await createTestApp({ defaultRateLimit: { max: 3, windowMs: 10_000 }, rateLimits: { loginMax: 100, refreshMax: 60 } });
    const bearer = async (email: string) => {
      const user = await createUser(app, { email });
      const response = await login(app, { email, password: PASSWORD }, '198.51.100.1');
      return { id: user.id, headers: { authorization: `Bearer ${response.json().accessToken as string}` } };
    };
    ada = await bearer('ada@example.com');
    bob = await bearer('bob@example.com');
  });
  afterAll(() => app.close());

  const get = (url: string, options: { headers?: Record<string, string>; remoteAddress?: string } = {}) =>
    app.inject({ method: 'GET', url, ...options });

  it('answers 429 in the envelope with Retry-After after the limit, per IP for anonymous callers', async () => {
    const ip = { remoteAddress: '192.0.2.10' };
    for (let n = 1; n <= 3; n++) {
      const response = await get('/api/v1/users', ip);
      expect(response.statusCode).toBe(200);
      expectRateLimitHeaders(response, 3, 3 - n, 10);
    }
    expectRateLimited(await get('/api/v1/users', ip), 3, 10);
    // Every route shares the bucket, GraphQL and unknown routes included.
    expectRateLimited(await get('/healthz', ip), 3, 10);
    expectRateLimited(await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ __typename }' }, ...ip }), 3, 10, true);
    // Another IP has its own bucket.
    const other = await get('/api/v1/users', { remoteAddress: '192.0.2.11' });
    expect(other.statusCode).toBe(200);
    expectRateLimitHeaders(other, 3, 2, 10);
  });

  it('counts authenticated callers per user, whatever their IP, apart from their IP', async () => {
    const exhaustedIp = '192.0.2.20';
    for (let n = 1; n <= 3; n++) expect((await get('/healthz', { remoteAddress: exhaustedIp })).statusCode).toBe(200);
    expectRateLimited(await get('/api/v1/users', { remoteAddress: exhaustedIp }), 3, 10);

    // Ada from the exhausted IP is not limited: her own bucket, shared over her IPs.
    const first = await get(`/api/v1/users/${ada.id}`, { headers: ada.headers, remoteAddress: exhaustedIp });
    expect(first.statusCode).toBe(200);
    expectRateLimitHeaders(first, 3, 2, 10);
    const second = await get('/api/v1/users', { headers: ada.headers, remoteAddress: '192.0.2.21' });
    expectRateLimitHeaders(second, 3, 1, 10);
    const third = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: ada.headers,
      payload: { query: '{ __typename }' },
      remoteAddress: '192.0.2.22',
    });
    expect(third.statusCode).toBe(200);
    expectRateLimitHeaders(third, 3, 0, 10);
    expectRateLimited(await get('/api/v1/users', { headers: ada.headers, remoteAddress: '192.0.2.23' }), 3, 10);

    // Bob is not limited by Ada's use, from the same IP either.
    const bobs = await get('/api/v1/users', { headers: bob.headers, remoteAddress: '192.0.2.23' });
    expect(bobs.statusCode).toBe(200);
    expectRateLimitHeaders(bobs, 3, 2, 10);
  });

  it('counts requests with bad credentials against the IP, not against the user they name', async () => {
    const ip = { remoteAddress: '192.0.2.30' };
    for (let n = 1; n <= 3; n++) {
      const response = await get('/api/v1/users', { ...ip, headers: { authorization: 'Bearer forged' } });
      expect(response.statusCode).toBe(401);
      expectRateLimitHeaders(response, 3, 3 - n, 10);
    }
    const anonymous = await get('/api/v1/users', ip);
    expect(anonymous.statusCode).toBe(429);
    const asBob = await get('/api/v1/users', { headers: bob.headers, remoteAddress: '192.0.2.30' });
    expect(asBob.statusCode).toBe(200);
  });
});

describe('the stricter buckets show their own numbers', () => {
  let app: FastifyInstance;

  beforeAll(async () => {
    app = await createTestApp({ defaultRateLimit: { max: 50, windowMs: 60_000 }, rateLimits: { loginMax: 2, refreshMax: 3 } });
    await createUser(app, { email: 'cy@example.com' });
  });
  afterAll(() => app.close());

  it('POST /login: its own limit per IP + email (the most restrictive bucket), and the default bucket counts too', async () => {
    const attempt = () => login(app, { email: 'cy@example.com', password: 'wrong password!' }, '192.0.2.40');
    const first = await attempt();
    expect(first.statusCode).toBe(401);
    expectRateLimitHeaders(first, 2, 1, 60);
    expectRateLimitHeaders(await attempt(), 2, 0, 60);
    expectRateLimited(await attempt(), 2, 60);
    // The three logins (the refused one too) were counted in that IP's default bucket as well.
    expectRateLimitHeaders(await app.inject({ method: 'GET', url: '/healthz', remoteAddress: '192.0.2.40' }), 50, 46, 60);
  });

  it('POST /auth/refresh: its own limit per IP', async () => {
    const refresh = () => app.inject({ method: 'POST', url: '/auth/refresh', payload: { refreshToken: 'not-a-token' }, remoteAddress: '192.0.2.41' });
    for (let n = 1; n <= 3; n++) {
      const response = await refresh();
      expect(response.statusCode).toBe(401);
      expectRateLimitHeaders(response, 3, 3 - n, 60);
    }
    expectRateLimited(await refresh(), 3, 60);
  });
});
