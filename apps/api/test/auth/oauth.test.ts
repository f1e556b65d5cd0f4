// OpenID Connect login (seed §5 rule 10, SPEC §3) through HTTP against a real local provider: PKCE, state, nonce, linking, refusals.
import { describe, expect, it } from '@jest/globals';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
import { Events, type MutableRedirectUri, type MutableResponse } from 'oauth2-mock-server';
import { createTestApp } from '../support/app.js';
import { LocalOidcProvider, useOidcApp } from '../support/oidc.js';

const TX_COOKIE = 'oauth_tx';

let provider: LocalOidcProvider;
let app: FastifyInstance;

useOidcApp((started) => ({ provider, app } = started));

let subjects = 0;
const newSubject = () => `subject-${++subjects}`;
const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

interface Started {
  location: URL;
  cookie: string;
  response: LightMyRequestResponse;
}

/** Step 1, the browser at our API: GET authorize → 302 to the provider and the transaction cookie. */
async function startLogin(query = '', target = app, name = 'local'): Promise<Started> {
  const response = await target.inject({ method: 'GET', url: `/auth/oauth/${name}/authorize${query}` });
  expect(response.statusCode).toBe(302);
  const cookie = response.cookies.find((c) => c.name === TX_COOKIE);
  expect(cookie).toBeDefined();
  return { location: new URL(response.headers.location as string), cookie: cookie!.value, response };
}

/** Step 3, the browser back at our API with the provider's redirect. */
const callback = (redirect: URL, cookie?: string, target = app) =>
  target.inject({ method: 'GET', url: `${redirect.pathname}${redirect.search}`, cookies: cookie ? { [TX_COOKIE]: cookie } : {} });

/** The whole flow, with `claims` in the tokens the provider signs. */
async function login(claims: Record<string, unknown>, query = '') {
  provider.claims = claims;
  const started = await startLogin(query);
  const redirect = await provider.authorize(started.location.href);
  return { ...started, redirect, result: await callback(redirect, started.cookie) };
}

const protectedCall = (headers: Record<string, string>, cookies: Record<string, string> = {}) =>
  app.inject({ method: 'GET', url: '/api/v1/api-keys', headers, cookies });

async function counts() {
  const { prisma } = app.db;
  return {
    users: await prisma.user.count(),
    accounts: await prisma.oAuthAccount.count(),
    sessions: await prisma.session.count(),
    refreshTokens: await prisma.refreshToken.count(),
  };
}

/** A refusal: the given status in the error envelope, no tokens, no sid cookie, and no row written. */
async function expectRefused(response: LightMyRequestResponse, status: number, before: Awaited<ReturnType<typeof counts>>) {
  expect(response.statusCode).toBe(status);
  const body = response.json();
  expect(body).toMatchObject({ code: expect.any(Number), message: expect.any(String) });
  expect(Math.floor(body.code / 100)).toBe(status); // five-digit code: status × 100 + detail
  expect(body).not.toHaveProperty('accessToken');
  expect(response.cookies.find((c) => c.name === 'sid' && c.value)).toBeUndefined();
  expect(await counts()).toEqual(before);
}

/** Re-signs a transaction cookie with the app's SESSION_SECRET after editing it (what only the server can do). */
function editTransaction(cookie: string, edit: (tx: Record<string, unknown>) => void): string {
  const unsigned = app.unsignCookie(cookie);
  expect(unsigned.valid).toBe(true);
  const tx = JSON.parse(Buffer.from(unsigned.value!, 'base64url').toString()) as Record<string, unknown>;
  edit(tx);
  return app.signCookie(Buffer.from(JSON.stringify(tx)).toString('base64url'));
}

describe('GET /auth/oauth/{provider}/authorize', () => {
  it('redirects to the provider with code_challenge (S256), state, nonce, client_id and redirect_uri', async () => {
    const { location, response } = await startLogin();
    expect(`${location.origin}${location.pathname}`).toBe(`${provider.url}/authorize`);
    const params = location.searchParams;
    expect(params.get('response_type')).toBe('code');
    expect(params.get('client_id')).toBe('usersposts');
    expect(params.get('redirect_uri')).toBe('http://127.0.0.1/auth/oauth/local/callback');
    expect(params.get('scope')?.split(' ')).toEqual(expect.arrayContaining(['openid', 'email', 'profile']));
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/); // base64url of a SHA-256
    expect(params.get('state')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(params.get('nonce')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(response.headers['cache-control']).toBe('no-store');

    const again = (await startLogin()).location.searchParams;
    for (const name of ['state', 'nonce', 'code_challenge']) expect(again.get(name)).not.toBe(params.get(name));
  });

  it('keeps the transaction in a short-lived, signed, HttpOnly cookie scoped to the callback', async () => {
    const { response, cookie } = await startLogin();
    expect(response.cookies.find((c) => c.name === TX_COOKIE)).toMatchObject({
      httpOnly: true,
      secure: true,
      sameSite: 'Lax',
      path: '/auth/oauth/local/callback',
      maxAge: 600,
    });
    expect(app.unsignCookie(cookie).valid).toBe(true);
  });

  it('answers 404 in the error envelope for an unknown provider (authorize and callback)', async () => {
    for (const url of ['/auth/oauth/nope/authorize', '/auth/oauth/nope/callback?code=x&state=y', '/auth/oauth/constructor/authorize']) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ code: 40400, message: expect.stringContaining('provider') });
    }
  });

  it('answers 503 when the issuer cannot be reached', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const down = await createTestApp({
      oauthProviders: [{ ...provider.providerConfig('down'), issuer: `http://127.0.0.1:${closedPort}` }],
    });
    try {
      const response = await down.inject({ method: 'GET', url: '/auth/oauth/down/authorize' });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toMatchObject({ code: 50300, message: expect.stringContaining('down') });
    } finally {
      await down.close();
    }
  });
});

describe('GET /auth/oauth/{provider}/callback: logging in', () => {
  it('first login: exchanges the code with the PKCE verifier, creates a USER and its OAuthAccount, answers a working token pair', async () => {
    const before = await counts();
    const subject = newSubject();
    const { location, result } = await login({ sub: subject, email: 'Ada.Lovelace@Example.com', email_verified: true, name: 'Ada Lovelace' });

    expect(result.statusCode).toBe(200);
    const body = result.json();
    expect(body).toEqual({
      success: true,
      login: 'tokens',
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
      tokenType: 'Bearer',
      expiresIn: 900,
    });
    expect(result.headers['cache-control']).toBe('no-store');
    // The transaction cookie is spent.
    expect(result.cookies.find((c) => c.name === TX_COOKIE)).toMatchObject({ value: '' });

    // The provider checked the verifier against the challenge of the authorization request and accepted it.
    expect(provider.exchanges).toHaveLength(1);
    expect(provider.exchanges[0]!.status).toBe(200);
    expect(s256(provider.exchanges[0]!.codeVerifier!)).toBe(location.searchParams.get('code_challenge'));

    const account = await app.db.prisma.oAuthAccount.findUniqueOrThrow({
      where: { provider_subject: { provider: 'local', subject } },
      include: { user: true },
    });
    expect(account.email).toBe('ada.lovelace@example.com');
    expect(account.user).toMatchObject({ name: 'Ada Lovelace', email: 'ada.lovelace@example.com', role: 'USER', passwordHash: null });
    expect(await counts()).toMatchObject({ users: before.users + 1, accounts: before.accounts + 1 });

    const me = await protectedCall({ authorization: `Bearer ${body.accessToken}` });
    expect(me.statusCode).toBe(200);
  });

  it('second login with the same subject logs the same user in (no duplicate user or account)', async () => {
    const subject = newSubject();
    const claims = { sub: subject, email: 'grace@example.com', email_verified: true, name: 'Grace Hopper' };
    const first = (await login(claims)).result;
    expect(first.statusCode).toBe(200);
    const before = await counts();
    // Even when the provider now reports another address, the (provider, sub) link decides.
    const second = (await login({ ...claims, email: 'grace.h@example.com' })).result;
    expect(second.statusCode).toBe(200);
    expect(await counts()).toMatchObject({ users: before.users, accounts: before.accounts });
    const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { userId: number };
    expect(claimsOf(second.json().accessToken).userId).toBe(claimsOf(first.json().accessToken).userId);
  });

  it('two first logins of the same new subject at once end with one user and one account', async () => {
    provider.claims = { sub: newSubject(), email: 'racer@example.com', email_verified: true, name: 'Racer' };
    const flows = await Promise.all([startLogin(), startLogin()]);
    const redirects = await Promise.all(flows.map((flow) => provider.authorize(flow.location.href)));
    const before = await counts();
    const results = await Promise.all(redirects.map((redirect, i) => callback(redirect, flows[i]!.cookie)));
    expect(results.map((r) => r.statusCode)).toEqual([200, 200]);
    expect(await counts()).toMatchObject({ users: before.users + 1, accounts: before.accounts + 1 });
  });

  it('an existing account with a password whose e-mail this service never verified is not linked → 409 (issue 10)', async () => {
    await app.db.prisma.user.create({ data: { name: 'Existing', email: 'unverified@example.com', passwordHash: 'x' } });
    const before = await counts();
    const { result } = await login({ sub: newSubject(), email: 'unverified@example.com', email_verified: true, name: 'Other Name' });
    await expectRefused(result, 409, before);
    expect(result.json().message).toContain('/auth/oauth/local/authorize?link=true');
  });

  it('links the first login to the existing USER whose e-mail this service verified', async () => {
    const existing = await app.db.prisma.user.create({
      data: { name: 'Existing', email: 'linked@example.com', passwordHash: 'x', emailVerifiedAt: new Date() },
    });
    const before = await counts();
    const subject = newSubject();
    const { result } = await login({ sub: subject, email: 'LINKED@example.com', email_verified: true, name: 'Other Name' });
    expect(result.statusCode).toBe(200);
    expect(await counts()).toMatchObject({ users: before.users, accounts: before.accounts + 1 });
    const account = await app.db.prisma.oAuthAccount.findUniqueOrThrow({ where: { provider_subject: { provider: 'local', subject } } });
    expect(account.userId).toBe(existing.id);
    // Linking does not rename the user.
    expect((await app.db.prisma.user.findUniqueOrThrow({ where: { id: existing.id } })).name).toBe('Existing');
  });

  it('names a new user after the e-mail local part when the provider sends no name', async () => {
    const subject = newSubject();
    const { result } = await login({ sub: subject, email: 'no.name@example.com', email_verified: true });
    expect(result.statusCode).toBe(200);
    const user = await app.db.prisma.user.findUniqueOrThrow({ where: { email: 'no.name@example.com' } });
    expect(user.name).toBe('no.name');
  });

  it('asks the userinfo endpoint when the ID token carries no e-mail', async () => {
    const subject = newSubject();
    provider.service.once(Events.BeforeUserinfo, (response: MutableResponse) => {
      response.body = { sub: subject, email: 'from.userinfo@example.com', email_verified: true, name: 'From Userinfo' };
    });
    const { result } = await login({ sub: subject });
    expect(result.statusCode).toBe(200);
    const user = await app.db.prisma.user.findUniqueOrThrow({ where: { email: 'from.userinfo@example.com' } });
    expect(user.name).toBe('From Userinfo');
  });

  it('with ?session=true: the sid cookie (HttpOnly, Secure, SameSite=Lax, Max-Age=86400) and {success: true}', async () => {
    const { result } = await login({ sub: newSubject(), email: 'session.user@example.com', email_verified: true, name: 'Sess' }, '?session=true');
    expect(result.statusCode).toBe(200);
    expect(result.json()).toEqual({ success: true, login: 'session' });
    const sid = result.cookies.find((c) => c.name === 'sid');
    expect(sid).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', maxAge: 86400, path: '/' });
    expect(sid!.value).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const setCookie = [result.headers['set-cookie']].flat().find((h) => h?.startsWith('sid='));
    expect(setCookie).toMatch(/; HttpOnly/);
    expect(setCookie).toMatch(/; Secure/);
    expect(setCookie).toMatch(/; SameSite=Lax/);
    expect(setCookie).toMatch(/; Max-Age=86400/);

    expect((await protectedCall({}, { sid: sid!.value })).statusCode).toBe(200);
  });
});

describe('GET /auth/oauth/{provider}/callback: refusals log nobody in and create nobody', () => {
  const claims = () => ({ sub: newSubject(), email: `refused-${subjects}@example.com`, email_verified: true, name: 'Refused' });

  it('wrong state → 401, and the code is never redeemed', async () => {
    provider.claims = claims();
    const { location, cookie } = await startLogin();
    const redirect = await provider.authorize(location.href);
    redirect.searchParams.set('state', 'not-the-state-we-sent');
    const before = await counts();
    const response = await callback(redirect, cookie);
    await expectRefused(response, 401, before);
    expect(response.json().message).toMatch(/state/);
    expect(provider.exchanges).toHaveLength(0);
  });

  it('missing state → 400 (the contract requires it)', async () => {
    const { location, cookie } = await startLogin();
    const redirect = await provider.authorize(location.href);
    redirect.searchParams.delete('state');
    await expectRefused(await callback(redirect, cookie), 400, await counts());
  });

  it('no transaction cookie (a callback this browser never started) → 401', async () => {
    provider.claims = claims();
    const { location } = await startLogin();
    const redirect = await provider.authorize(location.href);
    await expectRefused(await callback(redirect), 401, await counts());
    expect(provider.exchanges).toHaveLength(0);
  });

  it('a transaction cookie edited by the client (bad signature) → 401', async () => {
    provider.claims = claims();
    const { location, cookie } = await startLogin();
    const redirect = await provider.authorize(location.href);
    const [value, signature] = [cookie.slice(0, cookie.lastIndexOf('.')), cookie.slice(cookie.lastIndexOf('.') + 1)];
    const tx = JSON.parse(Buffer.from(value, 'base64url').toString()) as Record<string, unknown>;
    tx.codeVerifier = 'a'.repeat(43);
    const forged = `${Buffer.from(JSON.stringify(tx)).toString('base64url')}.${signature}`;
    await expectRefused(await callback(redirect, forged), 401, await counts());
    expect(provider.exchanges).toHaveLength(0);
  });

  it('an expired transaction (older than 10 minutes) → 401', async () => {
    provider.claims = claims();
    const { location, cookie } = await startLogin();
    const redirect = await provider.authorize(location.href);
    const expired = editTransaction(cookie, (tx) => {
      tx.expiresAt = Date.now() - 1;
    });
    await expectRefused(await callback(redirect, expired), 401, await counts());
  });

  it('PKCE mismatch: a verifier that does not match the code_challenge → the provider refuses the exchange → 401', async () => {
    provider.claims = claims();
    const { location, cookie } = await startLogin();
    const redirect = await provider.authorize(location.href);
    const otherVerifier = 'x'.repeat(43);
    const tampered = editTransaction(cookie, (tx) => {
      tx.codeVerifier = otherVerifier;
    });
    await expectRefused(await callback(redirect, tampered), 401, await counts());
    expect(provider.exchanges).toEqual([
      { codeVerifier: otherVerifier, status: 400, body: expect.stringContaining('code_verifier provided does not match code_challenge') },
    ]);
    expect(s256(otherVerifier)).not.toBe(location.searchParams.get('code_challenge'));
  });

  it('a replayed callback (same code, same transaction) → 401', async () => {
    const { redirect, cookie, result } = await login(claims());
    expect(result.statusCode).toBe(200);
    await expectRefused(await callback(redirect, cookie), 401, await counts());
  });

  it('an ID token whose nonce is not ours → 401', async () => {
    const before = await counts();
    const { result } = await login({ ...claims(), nonce: 'someone-elses-nonce' });
    await expectRefused(result, 401, before);
    expect(result.json().message).toMatch(/nonce/);
  });

  it('provider error=access_denied → 400', async () => {
    provider.service.once(Events.BeforeAuthorizeRedirect, (redirect: MutableRedirectUri) => {
      redirect.url.searchParams.delete('code');
      redirect.url.searchParams.set('error', 'access_denied');
      redirect.url.searchParams.set('error_description', 'The user said no');
    });
    provider.claims = claims();
    const { location, cookie } = await startLogin();
    const redirect = await provider.authorize(location.href);
    expect(redirect.searchParams.get('error')).toBe('access_denied');
    const response = await callback(redirect, cookie);
    await expectRefused(response, 400, await counts());
    expect(response.json().message).toContain('access_denied');
    expect(provider.exchanges).toHaveLength(0);
  });

  it('an e-mail the provider has not verified neither creates a user nor links to the one with that address → 401', async () => {
    await app.db.prisma.user.create({ data: { name: 'Victim', email: 'victim@example.com' } });
    const before = await counts();
    const { result } = await login({ sub: newSubject(), email: 'victim@example.com', email_verified: false, name: 'Attacker' });
    await expectRefused(result, 401, before);
    const { result: unknownAddress } = await login({ sub: newSubject(), email: 'nobody-yet@example.com', name: 'Unverified' });
    await expectRefused(unknownAddress, 401, before);
  });

  it('the issuer going down between authorize and callback → 503', async () => {
    const flaky = await LocalOidcProvider.start();
    const flakyApp = await createTestApp({ oauthProviders: [flaky.providerConfig('flaky')] });
    try {
      flaky.claims = claims();
      const users = await flakyApp.db.prisma.user.count();
      const { location, cookie } = await startLogin('', flakyApp, 'flaky');
      const redirect = await flaky.authorize(location.href);
      await flaky.stop();
      const response = await callback(redirect, cookie, flakyApp);
      expect(response.statusCode).toBe(503);
      expect(response.json()).toMatchObject({ code: 50300 });
      expect(await flakyApp.db.prisma.user.count()).toBe(users);
    } finally {
      await flakyApp.close();
    }
  });
});
