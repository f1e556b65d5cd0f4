// POST /login (SPEC §3) and its bucket (SPEC §4): failures that reveal nothing, 422 naming the field, 429 after N attempts per IP + email.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { createTestApp } from '../support/app.js';
import { createUser, login, PASSWORD, type TestUser } from '../support/auth.js';

type Response = Awaited<ReturnType<typeof login>>;

const refreshTokenCount = (app: FastifyInstance) => app.db.prisma.refreshToken.count();

function expectLoginFailed(response: Response) {
  expect(response.statusCode).toBe(401);
  expect(response.json()).toEqual({ success: false, error: expect.any(String) });
}

/** The bucket's headers (SPEC §4): limit, remaining, and when the window resets in unix seconds. */
function expectBucketHeaders(response: Response, limit: number, remaining: number) {
  expect(response.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(response.headers['x-ratelimit-remaining']).toBe(String(remaining));
  const reset = Number(response.headers['x-ratelimit-reset']);
  const now = Math.floor(Date.now() / 1000);
  expect(Number.isInteger(reset)).toBe(true);
  expect(reset).toBeGreaterThanOrEqual(now - 1);
  expect(reset).toBeLessThanOrEqual(now + 61);
}

function expectRateLimited(response: Response, limit: number) {
  expect(response.statusCode).toBe(429);
  expect(response.json()).toEqual({ code: 42900, message: expect.any(String) });
  const retryAfter = Number(response.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expectBucketHeaders(response, limit, 0);
}

describe('POST /login answers', () => {
  let app: FastifyInstance;
  let ada: TestUser;

  beforeAll(async () => {
    app = await createTestApp({ rateLimits: { loginMax: 1000, refreshMax: 60 } });
    ada = await createUser(app, { email: 'ada@example.com' });
    await app.db.prisma.user.create({ data: { name: 'No Password', email: 'nopass@example.com' } });
  });
  afterAll(() => app.close());

  it('a token pair for the right password, the email matched case-insensitively', async () => {
    const response = await login(app, { email: 'ADA@Example.com', password: PASSWORD });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      success: true,
      login: 'tokens',
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
      tokenType: 'Bearer',
      expiresIn: 900,
    });
  });

  it('the same 401 for a wrong password, an unknown email and a user without a password; nothing is issued', async () => {
    const before = await refreshTokenCount(app);
    const wrongPassword = await login(app, { email: ada.email, password: 'wrong password!' });
    const unknownEmail = await login(app, { email: 'nobody@example.com', password: 'wrong password!' });
    const noPassword = await login(app, { email: 'nopass@example.com', password: 'wrong password!' });
    for (const response of [wrongPassword, unknownEmail, noPassword]) {
      expectLoginFailed(response);
      expect(response.body).toBe(wrongPassword.body);
      expect(response.headers['content-type']).toBe(wrongPassword.headers['content-type']);
      expect(response.headers['set-cookie']).toBeUndefined();
    }
    expect(await refreshTokenCount(app)).toBe(before);
  });

  it.each([
    ['email', 'missing', { password: PASSWORD }],
    ['email', 'not an address', { email: 'not-an-email', password: PASSWORD }],
    ['email', 'not a string', { email: 42, password: PASSWORD }],
    ['password', 'missing', { email: 'ada@example.com' }],
    ['password', 'empty', { email: 'ada@example.com', password: '' }],
    ['password', 'over 128 characters', { email: 'ada@example.com', password: 'x'.repeat(129) }],
    ['session', 'not a boolean', { email: 'ada@example.com', password: PASSWORD, session: 'yes' }],
    ['extra', 'not in the contract', { email: 'ada@example.com', password: PASSWORD, extra: true }],
  ])('422 naming `%s` when it is %s; nothing is issued', async (field, _case, body) => {
    const before = await refreshTokenCount(app);
    const response = await login(app, body);
    expect(response.statusCode).toBe(422);
    const json = response.json();
    expect(json).toEqual({ code: 42200, message: expect.any(String), errors: expect.any(Array) });
    expect(json.errors).toContainEqual(expect.objectContaining({ field }));
    expect(await refreshTokenCount(app)).toBe(before);
  });

  it('400 (code 40000) for a body that is not JSON', async () => {
    const response = await app.inject({ method: 'POST', url: '/login', headers: { 'content-type': 'application/json' }, payload: '{"email": ' });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 40000 });
  });
});

describe('login bucket (small limit: 3 per minute per IP + email)', () => {
  let app: FastifyInstance;
  let grace: TestUser;
  let henry: TestUser;

  beforeAll(async () => {
    app = await createTestApp({ rateLimits: { loginMax: 3, refreshMax: 60 } });
    grace = await createUser(app, { email: 'grace@example.com' });
    henry = await createUser(app, { email: 'henry@example.com' });
  });
  afterAll(() => app.close());

  it('counts failed and successful attempts alike; the next one is 429 with Retry-After, even with the right password', async () => {
    const wrong = { email: grace.email, password: 'wrong password!' };
    const right = { email: grace.email, password: PASSWORD };

    const first = await login(app, wrong);
    expectLoginFailed(first);
    expectBucketHeaders(first, 3, 2);
    const second = await login(app, right);
    expect(second.statusCode).toBe(200);
    expectBucketHeaders(second, 3, 1);
    const third = await login(app, wrong);
    expectLoginFailed(third);
    expectBucketHeaders(third, 3, 0);

    const before = await refreshTokenCount(app);
    expectRateLimited(await login(app, right), 3);
    expectRateLimited(await login(app, wrong), 3);
    expectRateLimited(await login(app, { email: 'GRACE@example.com', password: PASSWORD }), 3);
    expect(await refreshTokenCount(app)).toBe(before);
  });

  it('does not limit another email from the same IP', async () => {
    const other = await login(app, { email: henry.email, password: PASSWORD });
    expect(other.statusCode).toBe(200);
    expectBucketHeaders(other, 3, 2);
    const unknown = await login(app, { email: 'someone-else@example.com', password: 'wrong password!' });
    expectLoginFailed(unknown);
    expectBucketHeaders(unknown, 3, 2);
  });

  it('does not limit the same email from another IP', async () => {
    const response = await login(app, { email: grace.email, password: PASSWORD }, '203.0.113.7');
    expect(response.statusCode).toBe(200);
    expectBucketHeaders(response, 3, 2);
    expectRateLimited(await login(app, { email: grace.email, password: PASSWORD }), 3);
  });
});

describe('login bucket (default: 10 per minute per IP + email)', () => {
  let app: FastifyInstance;
  let ivy: TestUser;

  beforeAll(async () => {
    app = await createTestApp();
    expect(app.config.rateLimits.loginMax).toBe(10);
    ivy = await createUser(app, { email: 'ivy@example.com' });
  });
  afterAll(() => app.close());

  it('allows 10 attempts, then answers the 11th with 429', async () => {
    for (let attempt = 1; attempt <= 10; attempt++) {
      const response = await login(app, { email: ivy.email, password: attempt === 10 ? PASSWORD : `wrong password ${attempt}` });
      expect(response.statusCode).toBe(attempt === 10 ? 200 : 401);
      expectBucketHeaders(response, 10, 10 - attempt);
    }
    expectRateLimited(await login(app, { email: ivy.email, password: PASSWORD }), 10);
    expect((await login(app, { email: 'other@example.com', password: PASSWORD })).statusCode).toBe(401);
  });
});
