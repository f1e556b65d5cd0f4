// Attack: locking an account's owner out on purpose (issue 31, item 3; SPEC §3.3). A bad credential header on POST
// /login was refused before the address's buckets counted it, yet counted as a failed login of the e-mail in the body:
// 31 such requests from one address locked the ADMIN out for 15 minutes. And the per-account counters lived in an LRU of
// 5,000 keys: 5,200 failures on made-up e-mails reset any account's. Now every attempt is the address's to pay for, the
// account guard counts refused passwords only and never refuses an address the owner logs in from, and its counters are
// kept until their window ends.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { loginAccountBucket } from '../../src/rate-limits/buckets.js';
import { createTestApp } from '../support/app.js';
import { createUser, type TestUser } from '../support/auth.js';

const WRONG = 'not the password at all';
const repeat = <T>(n: number, value: T) => Array.from({ length: n }, () => value);

let app: FastifyInstance;
let admin: TestUser;
beforeAll(async () => {
  // Behind a proxy that appends the client address to X-Forwarded-For (so each test may speak from many addresses).
  app = await createTestApp({ trustProxy: true });
  admin = await createUser(app, { email: 'admin@example.com', role: 'ADMIN' });
});
afterAll(() => app.close());

const login = (address: string, body: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/login', payload: body, headers: { 'x-forwarded-for': address, ...headers } });
const statuses = async (requests: (() => Promise<{ statusCode: number }>)[]) => {
  const answers: number[] = [];
  for (const request of requests) answers.push((await request()).statusCode);
  return answers;
};

describe('attack: a bad credential header aimed at the ADMIN', () => {
  it('is the sending address’s failure (401, then 429 from its buckets), never the account’s: the ADMIN logs in at once', async () => {
    const badHeader = { authorization: 'Bearer not-a-token' };
    const fromOne = repeat(31, () => login('198.51.100.7', { email: admin.email, password: 'whatever' }, badHeader));
    expect(await statuses(fromOne)).toEqual([...repeat(10, 401), ...repeat(21, 429)]);
    // From 40 addresses at once: each pays for its own attempt, the account nothing.
    const fromMany = Array.from({ length: 40 }, (_, n) => () => login(`198.51.100.${n + 100}`, { email: admin.email, password: 'x' }, badHeader));
    expect(await statuses(fromMany)).toEqual(repeat(40, 401));
    expect((await login('192.0.2.1', { email: admin.email, password: admin.password })).statusCode).toBe(200);
  });
});

describe('attack: distributed wrong passwords aimed at the owner', () => {
  let owner: TestUser;
  beforeAll(async () => {
    owner = await createUser(app, { email: 'owner@example.com' });
  });

  it('an address the owner logged in from is never refused; a new one is, once the account is over its failures', async () => {
    expect((await login('192.0.2.50', { email: owner.email, password: owner.password })).statusCode).toBe(200);
    const botnet = Array.from({ length: 35 }, (_, n) => () => login(`203.0.113.${n + 1}`, { email: owner.email, password: WRONG }));
    expect(await statuses(botnet)).toEqual([...repeat(30, 401), ...repeat(5, 429)]);
    expect((await login('192.0.2.50', { email: owner.email, password: owner.password })).statusCode).toBe(200);
    expect((await login('192.0.2.51', { email: owner.email, password: owner.password })).statusCode).toBe(429);
    // From the known address a wrong password is still just that (and counted): the exemption is not a free pass.
    expect((await login('192.0.2.50', { email: owner.email, password: WRONG })).statusCode).toBe(401);
  });

  it('the owner on a new address while the guard holds: a password reset from there makes it theirs', async () => {
    expect((await login('192.0.2.60', { email: owner.email, password: owner.password })).statusCode).toBe(429);
    const token = await app.identity.accountTokens.issue(owner.id, 'password_reset', owner.email); // the mailed link's
    const reset = await app.inject({
      method: 'POST',
      url: '/auth/password/reset',
      payload: { token, newPassword: 'the owner is back in' },
      headers: { 'x-forwarded-for': '192.0.2.60' },
    });
    expect(reset.statusCode).toBe(204);
    expect((await login('192.0.2.60', { email: owner.email, password: 'the owner is back in' })).statusCode).toBe(200);
    owner.password = 'the owner is back in';
  });

  it('6,000 failures on made-up e-mails do not make the guard forget the account’s', async () => {
    const bucket = loginAccountBucket(app.config.rateLimits);
    for (let n = 0; n < 6_000; n++) await app.consumeRateLimit(bucket, { key: `made-up-${n}@example.com` }).catch(() => undefined);
    expect((await login('192.0.2.52', { email: owner.email, password: owner.password })).statusCode).toBe(429);
    expect((await login('192.0.2.50', { email: owner.email, password: owner.password })).statusCode).toBe(200);
  });
});
