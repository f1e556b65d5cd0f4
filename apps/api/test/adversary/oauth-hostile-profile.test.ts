// A provider (or whoever controls an account at one) asserts a profile built to slip past this service's rules: look-alike
// and invisible characters in the address, a display form, NUL bytes, an over-long name; and first logins in numbers to
// make accounts past the sign-up bucket. Proves the OpenID door makes accounts by the rules of every sign-up (SPEC §0.1,
// §4): refused (422, never 500) or normalised by the one documented rule, and counted in the client's bucket.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import { createTestApp } from '../support/app.js';
import { LocalOidcProvider } from '../support/oidc.js';

const TX_COOKIE = 'oauth_tx';
const SIGNUP_MAX = 3;

let app: FastifyInstance;
let provider: LocalOidcProvider;

beforeAll(async () => {
  provider = await LocalOidcProvider.start();
  app = await createTestApp({
    oauthProviders: [provider.providerConfig('local')],
    rateLimits: { signup: { max: SIGNUP_MAX, windowMs: 3_600_000 } },
  });
});
afterAll(async () => {
  await app?.close();
  await provider?.stop();
});

let address = 0;
/** A client address of its own for each test: the sign-up bucket is per address. */
const freshAddress = () => `10.77.0.${++address}`;
const uniqueEmail = (name: string) => `${name}-${randomUUID().slice(0, 8)}@example.com`;
const claimsWith = (overrides: Record<string, unknown>) => ({
  sub: `hostile-${randomUUID()}`,
  email: uniqueEmail('mallory'),
  email_verified: true,
  name: 'Mallory',
  ...overrides,
});

async function oidcLogin(claims: Record<string, unknown>, remoteAddress: string) {
  provider.claims = claims;
  const start = await app.inject({ method: 'GET', url: '/auth/oauth/local/authorize', remoteAddress });
  expect(start.statusCode).toBe(302);
  const tx = start.cookies.find((cookie) => cookie.name === TX_COOKIE)!.value;
  const redirect = await provider.authorize(start.headers.location as string);
  return app.inject({ method: 'GET', url: `${redirect.pathname}${redirect.search}`, cookies: { [TX_COOKIE]: tx }, remoteAddress });
}
const userIdOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).userId as number;
const counts = async () => ({ users: await app.db.prisma.user.count(), links: await app.db.prisma.oAuthAccount.count() });

describe('hostile profile claims make no account (and never a 500)', () => {
  const hostile: [attack: string, claims: Record<string, unknown>, field: string][] = [
    ['a Cyrillic а posing as a Latin a in the address', { email: 'аdmin@example.com' }, 'email'],
    ['a zero-width space in the address', { email: 'ad\u200Bmin@example.com' }, 'email'],
    ['fullwidth letters in the address', { email: 'ａｄｍｉｎ@example.com' }, 'email'],
    ['a right-to-left override in the address', { email: 'admin\u202Emoc.elpmaxe@example.com' }, 'email'],
    ['an address without a dot in its domain', { email: 'admin@localhost' }, 'email'],
    ['a display form x<victim@…> as the address', { email: 'x<victim@example.com>' }, 'email'],
    ['a NUL in the address', { email: 'ad\u0000min@example.com' }, 'email'],
    ['a NUL in the name', { name: 'Ad\u0000min' }, 'name'],
    ['an unpaired surrogate in the name', { name: 'Ad\uD800min' }, 'name'],
    ['a NUL in the subject', { sub: 'hostile\u0000sub' }, 'sub'],
  ];

  it.each(hostile)('%s: 422 naming the claim, no user, no link', async (_attack, overrides, field) => {
    const claims = claimsWith(overrides);
    const before = await counts();
    const response = await oidcLogin(claims, freshAddress());
    expect(response.statusCode).toBe(422);
    expect(response.json()).toMatchObject({ code: 42200, errors: [expect.objectContaining({ field })] });
    expect(response.json()).not.toHaveProperty('accessToken');
    expect(await counts()).toEqual(before);
  });

  it.each(hostile.filter(([, , field]) => field === 'email'))(
    '%s: REST sign-up refuses the same address with the same words',
    async (_attack, overrides) => {
      const email = overrides.email as string;
      const oidc = await oidcLogin(claimsWith(overrides), freshAddress());
      const rest = await app.inject({ method: 'POST', url: '/api/v1/users', payload: { name: 'Mallory', email }, remoteAddress: freshAddress() });
      expect(rest.statusCode).toBe(422);
      expect(oidc.json().errors).toEqual(rest.json().errors);
    },
  );
});

describe('the one normalisation: an over-long name is cut at a grapheme boundary', () => {
  it.each([
    ['an emoji sequence across the bound (the old cut left a lone surrogate)', `${'a'.repeat(99)}👩‍👩‍👧 and more`, 'a'.repeat(99)],
    ['a combining accent across the bound', `${'b'.repeat(99)}e\u0301${'c'.repeat(20)}`, 'b'.repeat(99)],
    ['astral characters, counted as the contract counts them (code points)', '😀'.repeat(150), '😀'.repeat(100)],
  ])('%s: the account is made with the cut name, which REST accepts as it is', async (_case, name, expected) => {
    const claims = claimsWith({ name });
    const response = await oidcLogin(claims, freshAddress());
    expect(response.statusCode).toBe(200);
    const user = await app.db.prisma.user.findUniqueOrThrow({ where: { id: userIdOf(response.json().accessToken) } });
    expect(user.name).toBe(expected);
    expect(user.name).toMatch(/^(?:[^\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$/u); // no lone surrogate
    const same = await app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${user.id}`,
      headers: { authorization: `Bearer ${response.json().accessToken}` },
      payload: { name: user.name },
    });
    expect(same.statusCode).toBe(200);
  });
});

describe("first OpenID logins use up the address's sign-up bucket", () => {
  it('past the bucket a first login is refused (429) and makes no account; a linked identity still logs in', async () => {
    const remoteAddress = freshAddress();
    // One account by REST sign-up and the rest by OpenID: one bucket for both doors.
    const rest = await app.inject({ method: 'POST', url: '/api/v1/users', payload: { name: 'Rest', email: uniqueEmail('rest') }, remoteAddress });
    expect(rest.statusCode).toBe(201);
    const first = claimsWith({});
    for (const claims of [first, ...Array.from({ length: SIGNUP_MAX - 2 }, () => claimsWith({}))]) {
      expect((await oidcLogin(claims, remoteAddress)).statusCode).toBe(200);
    }

    const before = await counts();
    const over = claimsWith({});
    const refused = await oidcLogin(over, remoteAddress);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 42900 });
    expect(refused.headers['retry-after']).toBeDefined();
    expect(await counts()).toEqual(before);
    expect(await app.db.prisma.user.count({ where: { email: over.email } })).toBe(0);

    // Logging in again is not a sign-up: the bucket does not stand in its way.
    expect((await oidcLogin(first, remoteAddress)).statusCode).toBe(200);
    // And REST sign-up from that address is spent too.
    const restAgain = await app.inject({
      method: 'POST',
      url: '/api/v1/users',
      payload: { name: 'Rest', email: uniqueEmail('rest') },
      remoteAddress,
    });
    expect(restAgain.statusCode).toBe(429);
  });
});
