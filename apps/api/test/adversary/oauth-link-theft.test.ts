// A thief who held the owner's access token (or cookie) for a moment tries to attach their own OpenID login to the
// account, a way in that would outlive the owner's password change, logout everywhere and reset. Proves the link flow
// needs a recent login when it starts and when it links, dies with the sign-in that started it, that the owner sees and
// removes links (and nobody else does), and that every security event ends them (SPEC §3.2).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { randomUUID } from 'node:crypto';
import { ManualClock } from '../../src/auth/clock.js';
import { bearer, createAuthTestApp, createUser, type TestUser } from '../support/auth.js';
import { LocalOidcProvider } from '../support/oidc.js';
import { SmtpSink, tokenIn } from '../support/smtp.js';

const MINUTE = 60_000;
const TX_COOKIE = 'oauth_tx';
const NEW_PASSWORD = 'a brand new passphrase';

let app: FastifyInstance;
let provider: LocalOidcProvider;
let smtp: SmtpSink;
let clock: ManualClock;

beforeAll(async () => {
  provider = await LocalOidcProvider.start();
  smtp = await SmtpSink.start();
  clock = new ManualClock();
  app = await createAuthTestApp({
    clock,
    config: {
      oauthProviders: [provider.providerConfig('local')],
      mail: { smtpUrl: smtp.url, from: 'Users & Posts <no-reply@users-posts.test>', publicUrl: 'https://app.users-posts.test' },
      rateLimits: { loginMax: 1000, loginIpMax: 1000 },
    },
  });
});
afterAll(async () => {
  await app?.close();
  await provider?.stop();
  await smtp?.close();
});
// Each test's logins start from a moment of their own (the clock only moves forward).
beforeEach(() => clock.advance(MINUTE));

interface Pair {
  accessToken: string;
  refreshToken: string;
}

const uniqueEmail = (name: string) => `${name}-${randomUUID().slice(0, 8)}@example.com`;
/** The thief's own identity at the provider: their own, verified address. */
const thiefClaims = () => ({ sub: `thief-${randomUUID()}`, email: uniqueEmail('thief'), email_verified: true, name: 'Thief' });
const post = (url: string, payload?: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, ...(payload ? { payload } : {}), headers });
const userIdOf = (response: LightMyRequestResponse) =>
  JSON.parse(Buffer.from((response.json().accessToken as string).split('.')[1]!, 'base64url').toString()).userId as number;
const sidOf = (accessToken: string) => JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()).sid as string;
const linksOf = (userId: number) => app.db.prisma.oAuthAccount.count({ where: { userId } });

async function loginPair(user: TestUser, password = user.password): Promise<Pair> {
  const response = await post('/login', { email: user.email, password });
  expect(response.statusCode).toBe(200);
  return response.json() as Pair;
}
const refresh = (refreshToken: string) => post('/auth/refresh', { refreshToken });

/** The first half of the browser flow: authorize (with the caller's credentials), then the provider's redirect back. */
async function startFlow(claims: Record<string, unknown>, query: string, headers: Record<string, string> = {}, cookies: Record<string, string> = {}) {
  provider.claims = claims;
  const start = await app.inject({ method: 'GET', url: `/auth/oauth/local/authorize${query}`, headers, cookies });
  if (start.statusCode !== 302) return { start };
  const tx = start.cookies.find((cookie) => cookie.name === TX_COOKIE)!.value;
  const redirect = await provider.authorize(start.headers.location as string);
  return { start, finish: () => app.inject({ method: 'GET', url: `${redirect.pathname}${redirect.search}`, cookies: { [TX_COOKIE]: tx } }) };
}
async function oidcLogin(claims: Record<string, unknown>, query = '', headers: Record<string, string> = {}) {
  const flow = await startFlow(claims, query, headers);
  return flow.finish ? flow.finish() : flow.start;
}

/** A refusal that started nothing: the answer, no transaction cookie. */
function expectRefusedStart(response: LightMyRequestResponse, status: number, code: number) {
  expect(response.statusCode).toBe(status);
  expect(response.json()).toMatchObject({ code });
  expect(response.cookies.find((cookie) => cookie.name === TX_COOKIE && cookie.value)).toBeUndefined();
}
/** A refused callback: the answer, and no login (no tokens, no cookie). */
function expectRefusedCallback(response: LightMyRequestResponse, status: number, code: number) {
  expect(response.statusCode).toBe(status);
  expect(response.json()).toMatchObject({ code });
  expect(response.json()).not.toHaveProperty('accessToken');
  expect(response.cookies.find((cookie) => cookie.name === 'sid' && cookie.value)).toBeUndefined();
}
/** The thief's provider login does not reach the owner's account (it may make an account of the thief's own). */
async function expectNotTheOwner(claims: Record<string, unknown>, owner: TestUser) {
  const response = await oidcLogin(claims);
  if (response.statusCode === 200) expect(userIdOf(response)).not.toBe(owner.id);
}

describe('a stale login cannot start a link', () => {
  it('an access token whose login is older than RECENT_AUTH_MS, even freshly refreshed, gets 403 40301 and starts nothing', async () => {
    const owner = await createUser(app, { email: uniqueEmail('owner') });
    const pair = await loginPair(owner);
    clock.advance(11 * MINUTE); // the original access token (15 minutes) still verifies
    const refreshed = (await refresh(pair.refreshToken)).json() as Pair;

    for (const token of [pair.accessToken, refreshed.accessToken]) {
      const { start } = await startFlow(thiefClaims(), '?link=true', bearer(token));
      expectRefusedStart(start, 403, 40301);
    }
    expect(await linksOf(owner.id)).toBe(0);
  });

  it('a session cookie whose login is old gets 403 40301 too', async () => {
    const owner = await createUser(app, { email: uniqueEmail('cookie-owner') });
    const login = await post('/login', { email: owner.email, password: owner.password, session: true });
    const sid = login.cookies.find((cookie) => cookie.name === 'sid')!.value;
    clock.advance(11 * MINUTE);
    const { start } = await startFlow(thiefClaims(), '?link=true', {}, { sid });
    expectRefusedStart(start, 403, 40301);
    expect(await linksOf(owner.id)).toBe(0);
  });
});

describe('a link started with a recent login cannot be completed once it is not', () => {
  it('the login went stale between authorize and callback: 403 40301, nothing linked, nobody logged in', async () => {
    const owner = await createUser(app, { email: uniqueEmail('slow') });
    const pair = await loginPair(owner);
    clock.advance(9 * MINUTE);
    const claims = thiefClaims();
    const flow = await startFlow(claims, '?link=true', bearer(pair.accessToken));
    expect(flow.start.statusCode).toBe(302);
    clock.advance(2 * MINUTE); // the transaction (10 minutes) is alive; the login (11 minutes) is not recent
    expectRefusedCallback(await flow.finish!(), 403, 40301);
    expect(await linksOf(owner.id)).toBe(0);
    await expectNotTheOwner(claims, owner);
  });

  it('the owner changed the password (from the very sign-in the thief used) meanwhile: 401, nothing linked', async () => {
    const owner = await createUser(app, { email: uniqueEmail('changed') });
    const pair = await loginPair(owner);
    const claims = thiefClaims();
    const flow = await startFlow(claims, '?link=true', bearer(pair.accessToken));
    expect(flow.start.statusCode).toBe(302);
    // The same sign-in goes on, renewed and recent again: only the binding to the token version stops the link.
    const changed = await post('/auth/password', { currentPassword: owner.password, newPassword: NEW_PASSWORD }, bearer(pair.accessToken));
    expect(changed.statusCode).toBe(200);
    expectRefusedCallback(await flow.finish!(), 401, 40100);
    expect(await linksOf(owner.id)).toBe(0);
    await expectNotTheOwner(claims, owner);
  });

  it('the owner ended the sign-in that started it: 401, nothing linked', async () => {
    const owner = await createUser(app, { email: uniqueEmail('ended') });
    const stolen = await loginPair(owner);
    const own = await loginPair(owner);
    const flow = await startFlow(thiefClaims(), '?link=true', bearer(stolen.accessToken));
    expect(flow.start.statusCode).toBe(302);
    const ended = await app.inject({ method: 'DELETE', url: `/api/v1/sessions/${sidOf(stolen.accessToken)}`, headers: bearer(own.accessToken) });
    expect(ended.statusCode).toBe(204);
    expectRefusedCallback(await flow.finish!(), 401, 40100);
    expect(await linksOf(owner.id)).toBe(0);
  });

  it('a recent login at both ends links as before', async () => {
    const owner = await createUser(app, { email: uniqueEmail('fresh') });
    const pair = await loginPair(owner);
    const linked = await oidcLogin(thiefClaims(), '?link=true', bearer(pair.accessToken));
    expect(linked.statusCode).toBe(200);
    expect(userIdOf(linked)).toBe(owner.id);
    expect(await linksOf(owner.id)).toBe(1);
  });
});

/** The owner, fresh, with a provider login linked (as a thief with a fresh token could have). */
async function ownerWithLink() {
  const owner = await createUser(app, { email: uniqueEmail('linked') });
  const pair = await loginPair(owner);
  const claims = thiefClaims();
  const linked = await oidcLogin(claims, '?link=true', bearer(pair.accessToken));
  expect(linked.statusCode).toBe(200);
  const asOwner = await oidcLogin(claims);
  expect(userIdOf(asOwner)).toBe(owner.id); // the link logs in as the owner, until it ends
  return { owner, pair, claims };
}
const listLinks = (headers: Record<string, string>) => app.inject({ method: 'GET', url: '/api/v1/oauth-links', headers });
const unlink = (id: number, headers: Record<string, string>) => app.inject({ method: 'DELETE', url: `/api/v1/oauth-links/${id}`, headers });

describe('the owner sees and removes links; nobody else does', () => {
  it('lists the provider and when it was linked, not the subject or the provider address', async () => {
    const { owner, pair, claims } = await ownerWithLink();
    const listed = await listLinks(bearer(pair.accessToken));
    expect(listed.statusCode).toBe(200);
    const account = await app.db.prisma.oAuthAccount.findFirstOrThrow({ where: { userId: owner.id } });
    expect(listed.json()).toEqual({
      code: 0,
      message: 'ok',
      data: { items: [{ id: account.id, provider: 'local', createdAt: account.createdAt.toISOString() }], total: 1, page: 1, pageSize: 20 },
    });
    expect(listed.body).not.toContain(claims.sub);
    expect(listed.body).not.toContain(claims.email);
    expect((await app.inject({ method: 'GET', url: '/api/v1/oauth-links' })).statusCode).toBe(401);
  });

  it("another user neither sees nor removes the owner's link (404, as for one that does not exist)", async () => {
    const { owner, claims } = await ownerWithLink();
    const other = await createUser(app, { email: uniqueEmail('other') });
    const otherPair = await loginPair(other);
    const id = (await app.db.prisma.oAuthAccount.findFirstOrThrow({ where: { userId: owner.id } })).id;

    expect((await listLinks(bearer(otherPair.accessToken))).json().data).toMatchObject({ items: [], total: 0 });
    const refused = await unlink(id, bearer(otherPair.accessToken));
    expect(refused.statusCode).toBe(404);
    expect(refused.json()).toMatchObject({ code: 40400 });
    expect(await linksOf(owner.id)).toBe(1);
    expect(userIdOf(await oidcLogin(claims))).toBe(owner.id);
  });

  it('removing needs a recent login (a stale token or an API key gets 403); then the provider login no longer reaches the account', async () => {
    const { owner, pair, claims } = await ownerWithLink();
    const key = (await post('/api/v1/api-keys', { name: 'script' }, bearer(pair.accessToken))).json().data.key as string;
    const id = (await app.db.prisma.oAuthAccount.findFirstOrThrow({ where: { userId: owner.id } })).id;
    clock.advance(11 * MINUTE);

    const stale = await unlink(id, bearer(pair.accessToken));
    expect(stale.statusCode).toBe(403);
    expect(stale.json()).toMatchObject({ code: 40301 });
    const byKey = await app.inject({ method: 'DELETE', url: `/api/v1/oauth-links/${id}?api_key=${encodeURIComponent(key)}` });
    expect(byKey.statusCode).toBe(403);
    expect(await linksOf(owner.id)).toBe(1);

    const fresh = await loginPair(owner);
    expect((await unlink(id, bearer(fresh.accessToken))).statusCode).toBe(204);
    expect(await linksOf(owner.id)).toBe(0);
    expect((await unlink(id, bearer(fresh.accessToken))).statusCode).toBe(404);
    await expectNotTheOwner(claims, owner);
  });
});

describe('every security event ends the links (nothing an attacker could have obtained keeps working)', () => {
  const events: [string, (owner: TestUser, pair: Pair) => Promise<void>][] = [
    [
      'a password change',
      async (owner, pair) => {
        const changed = await post('/auth/password', { currentPassword: owner.password, newPassword: NEW_PASSWORD }, bearer(pair.accessToken));
        expect(changed.statusCode).toBe(200);
      },
    ],
    [
      'a logout everywhere',
      async (_owner, pair) => {
        expect((await post('/logout?all=true', undefined, bearer(pair.accessToken))).statusCode).toBe(204);
      },
    ],
    [
      'a password reset',
      async (owner) => {
        const mail = smtp.next(owner.email);
        expect((await post('/auth/password/forgot', { email: owner.email })).statusCode).toBe(202);
        const reset = await post('/auth/password/reset', { token: tokenIn(await mail), newPassword: NEW_PASSWORD });
        expect(reset.statusCode).toBe(204);
      },
    ],
    [
      'a refresh-token reuse',
      async (_owner, pair) => {
        expect((await refresh(pair.refreshToken)).statusCode).toBe(200);
        expect((await refresh(pair.refreshToken)).statusCode).toBe(401);
      },
    ],
  ];

  it.each(events)("%s: the link is gone and the thief's provider login no longer logs in as the owner", async (_event, perform) => {
    const { owner, pair, claims } = await ownerWithLink();
    await perform(owner, pair);
    expect(await linksOf(owner.id)).toBe(0);
    await expectNotTheOwner(claims, owner);
  });
});
