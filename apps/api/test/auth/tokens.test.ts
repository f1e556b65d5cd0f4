// The token lifecycle of seed §3, row by row, through HTTP with a hand-moved clock; plus the JWT attacks of RFC 8725.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createTestDatabase } from '@users-posts/db/testing';
import type { FastifyInstance } from 'fastify';
import { createHmac } from 'node:crypto';
import { buildApp } from '../../src/app.js';
import { ManualClock } from '../../src/auth/clock.js';
import { hashPassword } from '../../src/auth/credentials/passwords.js';
import type { Config } from '../../src/config/config.js';
import { testConfig } from '../support/config.js';

const MINUTE = 60_000;
const PASSWORD = 'correct horse battery';

let app: FastifyInstance;
let config: Config;
let clock: ManualClock;
let userId: number;

beforeAll(async () => {
  clock = new ManualClock(Date.parse('2026-11-22T10:00:00Z'));
  // The login bucket runs on real time and is tested in auth/login-rate-limit.test.ts; this suite logs in often.
  config = testConfig({ rateLimits: { loginMax: 1000, refreshMax: 1000 } });
  app = await buildApp(config, { database: await createTestDatabase(), clock });
  const user = await app.db.prisma.user.create({
    data: { name: 'Tess', email: 'tess@example.com', passwordHash: await hashPassword(PASSWORD) },
  });
  userId = user.id;
});
afterAll(() => app.close());
beforeEach(() => clock.advance(MINUTE)); // tests do not share a second

interface Pair {
  accessToken: string;
  refreshToken: string;
}

async function login(extra: Record<string, unknown> = {}) {
  return app.inject({ method: 'POST', url: '/login', payload: { email: 'TESS@example.com', password: PASSWORD, ...extra } });
}
async function loginPair(): Promise<Pair> {
  const response = await login();
  expect(response.statusCode).toBe(200);
  return response.json() as Pair;
}
const refresh = (refreshToken: string) => app.inject({ method: 'POST', url: '/auth/refresh', payload: { refreshToken } });
const protectedCall = (headers: Record<string, string>) => app.inject({ method: 'GET', url: '/api/v1/api-keys', headers });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const hs256 = (secret: string, header: object, payload: object) => {
  const body = `${b64(header)}.${b64(payload)}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
};
const tokenVersion = async () => (await app.db.prisma.user.findUniqueOrThrow({ where: { id: userId } })).tokenVersion;

function expect401(response: { statusCode: number; json: () => unknown }) {
  expect(response.statusCode).toBe(401);
  expect(response.json()).toMatchObject({ code: 40100, error: expect.any(String), message: expect.any(String) });
}

describe('seed §3 token lifecycle', () => {
  it('no tokens → successful login → both tokens returned with their lifetimes', async () => {
    const response = await login();
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toEqual({
      success: true,
      login: 'tokens',
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
      tokenType: 'Bearer',
      expiresIn: 900,
    });
    const access = claims(body.accessToken);
    expect(access).toEqual({
      userId,
      type: 'access',
      ver: await tokenVersion(),
      sid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      auth_time: Math.floor(clock.now() / 1000),
      jti: expect.any(String),
      iat: expect.any(Number),
      exp: expect.any(Number),
    });
    expect((access.exp as number) - (access.iat as number)).toBe(15 * 60);
    expect(access.iat).toBe(Math.floor(clock.now() / 1000));
    const refreshClaims = claims(body.refreshToken);
    expect(refreshClaims).toMatchObject({ userId, type: 'refresh' });
    expect((refreshClaims.exp as number) - (refreshClaims.iat as number)).toBe(7 * 24 * 3600);
    expect(JSON.stringify([access, refreshClaims])).not.toMatch(/password|email/i);
  });

  it('access token valid → request with it proceeds', async () => {
    const { accessToken } = await loginPair();
    expect((await protectedCall(bearer(accessToken))).statusCode).toBe(200);
  });

  it('access token valid → 15 minutes elapse → the next protected request gets 401', async () => {
    const { accessToken } = await loginPair();
    clock.advance(15 * MINUTE - 1000);
    expect((await protectedCall(bearer(accessToken))).statusCode).toBe(200);
    clock.advance(2000);
    expect401(await protectedCall(bearer(accessToken)));
  });

  it('access token expired → refresh with a valid refresh token → a new pair; the old refresh token is invalidated', async () => {
    const first = await loginPair();
    clock.advance(16 * MINUTE);
    const response = await refresh(first.refreshToken);
    expect(response.statusCode).toBe(200);
    const second = response.json() as Pair;
    expect(second).toMatchObject({ tokenType: 'Bearer', expiresIn: 900 });
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect((await protectedCall(bearer(second.accessToken))).statusCode).toBe(200);
    const stored = await app.db.prisma.refreshToken.findUniqueOrThrow({ where: { id: claims(first.refreshToken).jti as string } });
    expect(stored.usedAt).not.toBeNull();
  });

  it('refresh token expired or invalid → 401, and the client must log in again', async () => {
    const { refreshToken } = await loginPair();
    expect401(await refresh('not-a-jwt'));
    clock.advance(7 * 24 * 60 * MINUTE + 1000);
    const expired = await refresh(refreshToken);
    expect401(expired);
    expect(expired.json().error).toMatch(/expired/);
  });

  it('an invalidated refresh token presented again → reuse detected → every token of the user revoked', async () => {
    const first = await loginPair();
    const other = await loginPair(); // another device, another family
    const rotated = (await refresh(first.refreshToken)).json() as Pair;
    clock.advance(1000); // strict by default (SPEC §3): one second later is already reuse
    const versionBefore = await tokenVersion();

    const reuse = await refresh(first.refreshToken);
    expect401(reuse);
    expect(reuse.json().error).toMatch(/reuse/);

    expect(await tokenVersion()).toBe(versionBefore + 1);
    expect401(await refresh(rotated.refreshToken));
    expect401(await refresh(other.refreshToken));
    expect401(await protectedCall(bearer(rotated.accessToken)));
    expect401(await protectedCall(bearer(other.accessToken)));
    expect((await loginPair()).accessToken).toBeTruthy(); // logging in again works
  });

  it('access token valid → logout → that access token is rejected, its refresh family revoked', async () => {
    const pair = await loginPair();
    const untouched = await loginPair();
    const logout = await app.inject({
      method: 'POST',
      url: '/logout',
      headers: bearer(pair.accessToken),
      payload: { refreshToken: pair.refreshToken },
    });
    expect(logout.statusCode).toBe(204);
    expect401(await protectedCall(bearer(pair.accessToken)));
    expect401(await refresh(pair.refreshToken));
    expect((await protectedCall(bearer(untouched.accessToken))).statusCode).toBe(200);
  });

  it('logout?all=true → every device logged out (access tokens via tokenVersion)', async () => {
    const here = await loginPair();
    const elsewhere = await loginPair();
    const logout = await app.inject({ method: 'POST', url: '/logout?all=true', headers: bearer(here.accessToken) });
    expect(logout.statusCode).toBe(204);
    expect401(await protectedCall(bearer(elsewhere.accessToken)));
    expect401(await refresh(elsewhere.refreshToken));
  });

  it('logout without credentials → 401', async () => {
    expect401(await app.inject({ method: 'POST', url: '/logout' }));
  });
});

describe('concurrent refresh of the same token', () => {
  it('exactly one of five wins; by default the others are reuse (401) and the user is revoked', async () => {
    const { refreshToken } = await loginPair();
    const responses = await Promise.all(Array.from({ length: 5 }, () => refresh(refreshToken)));
    const statuses = responses.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([200, 401, 401, 401, 401]);
    const winner = responses.find((r) => r.statusCode === 200)!.json() as Pair;
    expect401(await protectedCall(bearer(winner.accessToken)));
    expect401(await refresh(winner.refreshToken));
  });

  it('with REFRESH_REUSE_GRACE_MS set, the others get 409 and nothing is revoked', async () => {
    const graceApp = await buildApp(testConfig({ refreshReuseGraceMs: 10_000, rateLimits: { loginMax: 1000, refreshMax: 1000 } }), {
      database: await createTestDatabase(),
      clock,
    });
    try {
      await graceApp.db.prisma.user.create({ data: { name: 'Tess', email: 'tess@example.com', passwordHash: await hashPassword(PASSWORD) } });
      const login = await graceApp.inject({ method: 'POST', url: '/login', payload: { email: 'tess@example.com', password: PASSWORD } });
      const { refreshToken } = login.json() as Pair;
      const graceRefresh = () => graceApp.inject({ method: 'POST', url: '/auth/refresh', payload: { refreshToken } });
      const responses = await Promise.all(Array.from({ length: 5 }, graceRefresh));
      expect(responses.map((r) => r.statusCode).sort()).toEqual([200, 409, 409, 409, 409]);
      expect(responses.find((r) => r.statusCode === 409)!.json()).toMatchObject({ code: 40900 });
      const winner = responses.find((r) => r.statusCode === 200)!.json() as Pair;
      const keys = await graceApp.inject({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(winner.accessToken) });
      expect(keys.statusCode).toBe(200);
      expect((await graceApp.inject({ method: 'POST', url: '/auth/refresh', payload: { refreshToken: winner.refreshToken } })).statusCode).toBe(200);
    } finally {
      await graceApp.close();
    }
  });
});

describe('JWT attacks are rejected (RFC 8725)', () => {
  const attack = async (token: string) => expect401(await protectedCall(bearer(token)));

  it('alg none', async () => {
    const { accessToken } = await loginPair();
    await attack(`${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims(accessToken))}.`);
  });

  it('a tampered payload or signature', async () => {
    const { accessToken } = await loginPair();
    const [header, , signature] = accessToken.split('.');
    await attack(`${header}.${b64({ ...claims(accessToken), userId: userId + 1 })}.${signature}`);
    // A signature's first character carries six whole bits (its last ones may carry padding): change that one.
    await attack(`${header}.${accessToken.split('.')[1]}.${signature!.startsWith('A') ? 'B' : 'A'}${signature!.slice(1)}`);
  });

  it('an access token signed with the refresh secret, or HS512', async () => {
    const { accessToken } = await loginPair();
    await attack(hs256(config.secrets.jwtRefresh, { alg: 'HS256', typ: 'JWT' }, claims(accessToken)));
    const body = `${b64({ alg: 'HS512', typ: 'JWT' })}.${b64(claims(accessToken))}`;
    await attack(`${body}.${createHmac('sha512', config.secrets.jwtAccess).update(body).digest('base64url')}`);
  });

  it('a refresh token used as an access token, and an access token used to refresh', async () => {
    const pair = await loginPair();
    await attack(pair.refreshToken);
    expect401(await refresh(pair.accessToken));
    // Even signed with the right secret, the wrong `type` is refused.
    await attack(hs256(config.secrets.jwtAccess, { alg: 'HS256', typ: 'JWT' }, { ...claims(pair.refreshToken), ver: await tokenVersion() }));
  });

  it('a malformed Authorization header', async () => {
    expect401(await protectedCall({ authorization: 'Basic dGVzczpwdw==' }));
    expect401(await protectedCall({ authorization: 'Bearer' }));
  });
});

describe('session login', () => {
  const sessionCookie = (response: { cookies: { name: string; value: string }[] }) => response.cookies.find((c) => c.name === 'sid');

  it('sets the sid cookie with the SPEC attributes and authenticates with it', async () => {
    const response = await login({ session: true });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true, login: 'session' });
    expect(response.headers['set-cookie']).toMatch(/^sid=[^;]+; Max-Age=86400; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
    const sid = sessionCookie(response)!.value;
    expect((await protectedCall({ cookie: `sid=${sid}` })).statusCode).toBe(200);
    expect(await app.db.prisma.session.count({ where: { id: sid } })).toBe(0); // stored hashed
  });

  it('expires after one day', async () => {
    const sid = sessionCookie(await login({ session: true }))!.value;
    clock.advance(24 * 60 * MINUTE + 1000);
    expect401(await protectedCall({ cookie: `sid=${sid}` }));
  });

  it('is destroyed by logout, and the cookie cleared', async () => {
    const sid = sessionCookie(await login({ session: true }))!.value;
    const logout = await app.inject({ method: 'POST', url: '/logout', headers: { cookie: `sid=${sid}` } });
    expect(logout.statusCode).toBe(204);
    expect(logout.headers['set-cookie']).toMatch(/^sid=; Max-Age=0;|^sid=;.*Expires=Thu, 01 Jan 1970/);
    expect401(await protectedCall({ cookie: `sid=${sid}` }));
  });
});
