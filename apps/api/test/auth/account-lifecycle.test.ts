// SPEC §3.2 row by row over HTTP, with real mail: sign-up and e-mail verification, password change, forgot and reset,
// sign-ins listed and ended, security events that leave no credential behind, recent logins, the last ADMIN. Mail goes
// over SMTP to an in-process server; the tests follow the links' tokens as a user would.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/auth/clock.js';
import { bearer, createAuthTestApp, createUser, login, type TestUser } from '../support/auth.js';
import { SmtpSink, tokenIn } from '../support/smtp.js';

const MINUTE = 60_000;
const NEW_PASSWORD = 'a brand new passphrase';

let app: FastifyInstance;
let smtp: SmtpSink;
let clock: ManualClock;

beforeAll(async () => {
  smtp = await SmtpSink.start();
  clock = new ManualClock(Date.parse('2026-11-27T10:00:00Z'));
  app = await createAuthTestApp({
    clock,
    config: {
      mail: { smtpUrl: smtp.url, from: 'Users & Posts <no-reply@users-posts.test>', publicUrl: 'https://app.users-posts.test' },
      // The login buckets are tested in login-rate-limit.test.ts; this suite logs in often.
      rateLimits: { loginMax: 1000, loginIpMax: 1000 },
    },
  });
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});
beforeEach(() => clock.advance(MINUTE));

const uniqueEmail = (name: string) => `${name}-${randomUUID().slice(0, 8)}@example.com`;
const post = (url: string, payload?: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, ...(payload ? { payload } : {}), headers });

interface Pair {
  accessToken: string;
  refreshToken: string;
}
async function loginPair(user: TestUser, password = user.password, userAgent?: string): Promise<Pair> {
  const response = await app.inject({
    method: 'POST',
    url: '/login',
    payload: { email: user.email, password },
    headers: userAgent ? { 'user-agent': userAgent } : {},
  });
  expect(response.statusCode).toBe(200);
  return response.json() as Pair;
}
async function loginCookie(user: TestUser): Promise<string> {
  const response = await login(app, { email: user.email, password: user.password, session: true });
  expect(response.statusCode).toBe(200);
  return response.cookies.find((cookie) => cookie.name === 'sid')!.value;
}
async function apiKeyOf(pair: Pair): Promise<string> {
  const response = await post('/api/v1/api-keys', { name: 'script' }, bearer(pair.accessToken));
  expect(response.statusCode).toBe(201);
  return response.json().data.key as string;
}
const me = (headers: Record<string, string>, url = '/api/v1/api-keys') => app.inject({ method: 'GET', url, headers });
const withKey = (key: string) => app.inject({ method: 'GET', url: `/api/v1/api-keys?api_key=${key}` });
const withCookie = (sid: string) => app.inject({ method: 'GET', url: '/api/v1/api-keys', cookies: { sid } });
const refresh = (refreshToken: string) => post('/auth/refresh', { refreshToken });
const expectInvalidToken = (response: LightMyRequestResponse) => {
  expect(response.statusCode).toBe(400);
  expect(response.json()).toMatchObject({ code: 40002 });
};

/** Every credential an attacker could have held: two token sign-ins, a cookie, an API key. */
async function everyCredentialOf(user: TestUser) {
  const first = await loginPair(user);
  const second = await loginPair(user);
  const cookie = await loginCookie(user);
  const key = await apiKeyOf(first);
  return { first, second, cookie, key };
}
async function expectAllRevoked(credentials: Awaited<ReturnType<typeof everyCredentialOf>>) {
  expect((await me(bearer(credentials.first.accessToken))).statusCode).toBe(401);
  expect((await me(bearer(credentials.second.accessToken))).statusCode).toBe(401);
  expect((await refresh(credentials.second.refreshToken)).statusCode).toBe(401);
  expect((await withCookie(credentials.cookie)).statusCode).toBe(401);
  expect((await withKey(credentials.key)).statusCode).toBe(401);
}

describe('sign-up and e-mail verification', () => {
  it('a sign-up mails a verification link; following it verifies the address, once', async () => {
    const email = uniqueEmail('newcomer');
    const mail = smtp.next(email);
    const created = await post('/api/v1/users', { name: 'Newcomer', email, password: 'a fine passphrase' });
    expect(created.statusCode).toBe(201);
    expect(created.json().data).toMatchObject({ email, emailVerified: false });

    const message = await mail;
    expect(message.subject).toBe('Confirm your e-mail address');
    expect(message.from).toBe('no-reply@users-posts.test');
    expect(message.text).toContain('https://app.users-posts.test/verify-email#token=');
    const token = tokenIn(message);
    expect((await post('/auth/email/verify', { token })).statusCode).toBe(204);
    const user = await app.db.prisma.user.findUniqueOrThrow({ where: { email } });
    expect(user.emailVerifiedAt).not.toBeNull();

    // token reuse
    expectInvalidToken(await post('/auth/email/verify', { token }));
    // the token is stored only as a hash
    expect(JSON.stringify(await app.db.prisma.accountToken.findMany())).not.toContain(token);
  });

  it('a GraphQL sign-up mails one too', async () => {
    const email = uniqueEmail('graphql');
    const mail = smtp.next(email);
    const response = await post('/graphql', {
      query: 'mutation($input: CreateUserInput!) { createUser(input: $input) { id email emailVerified } }',
      variables: { input: { name: 'Gee', email, password: 'a fine passphrase' } },
    });
    expect(response.json()).toMatchObject({ data: { createUser: { email, emailVerified: false } } });
    expect(tokenIn(await mail)).toMatch(/^[A-Za-z0-9_-]{22}$/); // 128 random bits
  });

  it('resend: a new link, the earlier one superseded; nothing for a verified address', async () => {
    const user = await createUser(app, { email: uniqueEmail('resend') });
    const pair = await loginPair(user);
    const first = smtp.next(user.email);
    expect((await post('/auth/email/verify/resend', undefined, bearer(pair.accessToken))).statusCode).toBe(202);
    const firstToken = tokenIn(await first);
    const second = smtp.next(user.email);
    expect((await post('/auth/email/verify/resend', undefined, bearer(pair.accessToken))).statusCode).toBe(202);
    const secondToken = tokenIn(await second);

    expectInvalidToken(await post('/auth/email/verify', { token: firstToken }));
    expect((await post('/auth/email/verify', { token: secondToken })).statusCode).toBe(204);

    // verified: a resend answers 202 and sends nothing (the next mail to this address is the one asked for below)
    expect((await post('/auth/email/verify/resend', undefined, bearer(pair.accessToken))).statusCode).toBe(202);
    const reset = smtp.next(user.email);
    await post('/auth/password/forgot', { email: user.email });
    expect((await reset).subject).toBe('Reset your password');
  });

  it('an expired verification token is refused like an unknown one', async () => {
    const user = await createUser(app, { email: uniqueEmail('late') });
    const pair = await loginPair(user);
    const mail = smtp.next(user.email);
    await post('/auth/email/verify/resend', undefined, bearer(pair.accessToken));
    const token = tokenIn(await mail);
    clock.advance(24 * 60 * MINUTE + 1);
    expectInvalidToken(await post('/auth/email/verify', { token }));
    expectInvalidToken(await post('/auth/email/verify', { token: 'A'.repeat(22) }));
  });
});

describe('password change (POST /auth/password)', () => {
  it('a wrong current password is a 401; a weak new one is a 422 naming newPassword', async () => {
    const user = await createUser(app, { email: uniqueEmail('weak') });
    const pair = await loginPair(user);
    const change = (body: object) => post('/auth/password', body, bearer(pair.accessToken));

    expect((await change({ currentPassword: 'not it at all', newPassword: NEW_PASSWORD })).statusCode).toBe(401);
    for (const newPassword of ['password123', 'qwertyuiop', user.email.toUpperCase(), 'short']) {
      const response = await change({ currentPassword: user.password, newPassword });
      expect(response.statusCode).toBe(422);
      expect(response.json().errors).toEqual([expect.objectContaining({ field: 'newPassword' })]);
    }
    // nothing changed: the old password still logs in, the caller is still signed in
    await loginPair(user);
    expect((await me(bearer(pair.accessToken))).statusCode).toBe(200);
  });

  it('keeps the caller signed in with a fresh pair and revokes every other credential, API keys included', async () => {
    const user = await createUser(app, { email: uniqueEmail('rotate') });
    const credentials = await everyCredentialOf(user);
    const caller = await loginPair(user);

    const changed = await post('/auth/password', { currentPassword: user.password, newPassword: NEW_PASSWORD }, bearer(caller.accessToken));
    expect(changed.statusCode).toBe(200);
    const renewed = changed.json() as Pair & { login: string };
    expect(renewed).toMatchObject({ success: true, login: 'tokens', tokenType: 'Bearer', expiresIn: 900 });

    await expectAllRevoked(credentials);
    // the caller's old access and refresh tokens stop; the renewed pair works and refreshes
    expect((await me(bearer(caller.accessToken))).statusCode).toBe(401);
    expect((await refresh(caller.refreshToken)).statusCode).toBe(401);
    expect((await me(bearer(renewed.accessToken))).statusCode).toBe(200);
    expect((await refresh(renewed.refreshToken)).statusCode).toBe(200);
    // the old password no longer logs in, the new one does
    expect((await login(app, { email: user.email, password: user.password })).statusCode).toBe(401);
    await loginPair(user, NEW_PASSWORD);
  });

  it('signed in by cookie: a new cookie, the old one ended', async () => {
    const user = await createUser(app, { email: uniqueEmail('cookie') });
    const sid = await loginCookie(user);
    const changed = await app.inject({
      method: 'POST',
      url: '/auth/password',
      cookies: { sid },
      payload: { currentPassword: user.password, newPassword: NEW_PASSWORD },
    });
    expect(changed.statusCode).toBe(200);
    expect(changed.json()).toEqual({ success: true, login: 'session' });
    const renewed = changed.cookies.find((cookie) => cookie.name === 'sid')!.value;
    expect(renewed).not.toBe(sid);
    expect((await withCookie(sid)).statusCode).toBe(401);
    expect((await withCookie(renewed)).statusCode).toBe(200);
  });

  it('an API key cannot change the password', async () => {
    const user = await createUser(app, { email: uniqueEmail('keyed') });
    const key = await apiKeyOf(await loginPair(user));
    const response = await post(`/auth/password?api_key=${key}`, { currentPassword: user.password, newPassword: NEW_PASSWORD });
    expect(response.statusCode).toBe(403);
    await loginPair(user); // unchanged
  });
});

describe('forgot and reset', () => {
  it('reset by mail: the link works once, verifies the address, and ends every credential', async () => {
    const user = await createUser(app, { email: uniqueEmail('forgetful') });
    const credentials = await everyCredentialOf(user);
    const mail = smtp.next(user.email);
    const asked = await post('/auth/password/forgot', { email: user.email.toUpperCase() });
    expect(asked.statusCode).toBe(202);
    expect(asked.json()).toEqual({ success: true });
    const message = await mail;
    expect(message.subject).toBe('Reset your password');
    expect(message.text).toContain('https://app.users-posts.test/reset-password#token=');
    const token = tokenIn(message);

    // a weak password is refused and the token survives it
    expect((await post('/auth/password/reset', { token, newPassword: 'password1' })).statusCode).toBe(422);
    expect((await post('/auth/password/reset', { token, newPassword: NEW_PASSWORD })).statusCode).toBe(204);
    expectInvalidToken(await post('/auth/password/reset', { token, newPassword: 'another new passphrase' }));

    await expectAllRevoked(credentials);
    expect((await login(app, { email: user.email, password: user.password })).statusCode).toBe(401);
    await loginPair(user, NEW_PASSWORD);
    expect((await app.db.prisma.user.findUniqueOrThrow({ where: { id: user.id } })).emailVerifiedAt).not.toBeNull();
  });

  it('an unknown address: 202 and a notice without a link (the same path as a reset, issue 46), no token issued', async () => {
    const unknown = uniqueEmail('nobody');
    const tokensBefore = await app.db.prisma.accountToken.count();
    const mail = smtp.next(unknown);
    expect((await post('/auth/password/forgot', { email: unknown })).statusCode).toBe(202);
    const notice = await mail;
    expect(notice.subject).toBe('Password reset requested');
    expect(notice.text).toContain('no account uses this address');
    expect(`${notice.text}${notice.html}`).not.toContain('#token=');
    expect(await app.db.prisma.accountToken.count()).toBe(tokensBefore);
  });

  it('a newer request supersedes the older link; a password change supersedes both', async () => {
    const user = await createUser(app, { email: uniqueEmail('twice') });
    const first = smtp.next(user.email);
    await post('/auth/password/forgot', { email: user.email });
    const firstToken = tokenIn(await first);
    const second = smtp.next(user.email);
    await post('/auth/password/forgot', { email: user.email });
    const secondToken = tokenIn(await second);
    expectInvalidToken(await post('/auth/password/reset', { token: firstToken, newPassword: NEW_PASSWORD }));

    const pair = await loginPair(user);
    expect((await post('/auth/password', { currentPassword: user.password, newPassword: NEW_PASSWORD }, bearer(pair.accessToken))).statusCode).toBe(
      200,
    );
    expectInvalidToken(await post('/auth/password/reset', { token: secondToken, newPassword: 'yet another passphrase' }));
  });

  it('an expired link, and a verification token used for a reset, get the same 400', async () => {
    const user = await createUser(app, { email: uniqueEmail('expired') });
    const reset = smtp.next(user.email);
    await post('/auth/password/forgot', { email: user.email });
    const resetToken = tokenIn(await reset);
    clock.advance(31 * MINUTE);
    expectInvalidToken(await post('/auth/password/reset', { token: resetToken, newPassword: NEW_PASSWORD }));

    const pair = await loginPair(user);
    const verification = smtp.next(user.email);
    await post('/auth/email/verify/resend', undefined, bearer(pair.accessToken));
    const verificationToken = tokenIn(await verification);
    expectInvalidToken(await post('/auth/password/reset', { token: verificationToken, newPassword: NEW_PASSWORD }));
    await loginPair(user); // the password did not change
  });

  it('brute force of reset tokens is rate limited per client address', async () => {
    const guesses: number[] = [];
    for (let attempt = 0; attempt < 31; attempt++) {
      const response = await app.inject({
        method: 'POST',
        url: '/auth/password/reset',
        payload: { token: randomUUID(), newPassword: NEW_PASSWORD },
        remoteAddress: '203.0.113.77',
      });
      guesses.push(response.statusCode);
    }
    expect(guesses.slice(0, 30).every((status) => status === 400)).toBe(true);
    expect(guesses[30]).toBe(429);
  });

  it('a reset racing a login with the old password leaves that login nothing that works', async () => {
    const user = await createUser(app, { email: uniqueEmail('race') });
    const mail = smtp.next(user.email);
    await post('/auth/password/forgot', { email: user.email });
    const token = tokenIn(await mail);
    const [reset, ...logins] = await Promise.all([
      post('/auth/password/reset', { token, newPassword: NEW_PASSWORD }),
      ...Array.from({ length: 4 }, () => login(app, { email: user.email, password: user.password })),
    ]);
    expect(reset!.statusCode).toBe(204);
    for (const response of logins) {
      if (response.statusCode !== 200) {
        expect(response.statusCode).toBe(401);
        continue;
      }
      // a login that passed its password check before the reset: whatever it got is revoked
      const pair = response.json() as Pair;
      expect((await me(bearer(pair.accessToken))).statusCode).toBe(401);
      expect((await refresh(pair.refreshToken)).statusCode).toBe(401);
    }
    expect(await app.db.prisma.session.count({ where: { userId: user.id } })).toBe(0);
  });
});

describe('sign-ins (GET and DELETE /api/v1/sessions)', () => {
  it('lists the caller’s sign-ins, and ending one stops its tokens at once', async () => {
    const user = await createUser(app, { email: uniqueEmail('devices') });
    const laptop = await loginPair(user, user.password, 'Laptop/1.0');
    clock.advance(1000);
    const phone = await loginPair(user, user.password, 'Phone/2.0');
    const listed = await me(bearer(laptop.accessToken), '/api/v1/sessions');
    expect(listed.statusCode).toBe(200);
    const items = listed.json().data.items as { id: string; kind: string; userAgent: string; current: boolean }[];
    expect(items.map((item) => [item.userAgent, item.kind, item.current])).toEqual([
      ['Phone/2.0', 'tokens', false],
      ['Laptop/1.0', 'tokens', true],
    ]);
    expect(listed.json().data).toMatchObject({ total: 2, page: 1, pageSize: 20 });

    const phoneId = items[0]!.id;
    expect((await app.inject({ method: 'DELETE', url: `/api/v1/sessions/${phoneId}`, headers: bearer(laptop.accessToken) })).statusCode).toBe(204);
    expect((await me(bearer(phone.accessToken))).statusCode).toBe(401);
    expect((await refresh(phone.refreshToken)).statusCode).toBe(401);
    expect((await me(bearer(laptop.accessToken))).statusCode).toBe(200);
  });

  it('a sign-in of another user is a 404, and stays live', async () => {
    const owner = await createUser(app, { email: uniqueEmail('owner') });
    const intruder = await createUser(app, { email: uniqueEmail('intruder') });
    const ownerPair = await loginPair(owner);
    const ownerSignIn = (await me(bearer(ownerPair.accessToken), '/api/v1/sessions')).json().data.items[0].id as string;
    const intruderPair = await loginPair(intruder);
    const response = await app.inject({ method: 'DELETE', url: `/api/v1/sessions/${ownerSignIn}`, headers: bearer(intruderPair.accessToken) });
    expect(response.statusCode).toBe(404);
    expect((await me(bearer(ownerPair.accessToken))).statusCode).toBe(200);
  });
});

describe('security events revoke API keys too', () => {
  it('logout everywhere', async () => {
    const user = await createUser(app, { email: uniqueEmail('everywhere') });
    const credentials = await everyCredentialOf(user);
    expect((await post('/logout?all=true', undefined, bearer(credentials.first.accessToken))).statusCode).toBe(204);
    await expectAllRevoked(credentials);
  });

  it('refresh-token reuse', async () => {
    const user = await createUser(app, { email: uniqueEmail('reused') });
    const credentials = await everyCredentialOf(user);
    expect((await refresh(credentials.first.refreshToken)).statusCode).toBe(200);
    expect((await refresh(credentials.first.refreshToken)).statusCode).toBe(401); // the stolen copy, replayed
    await expectAllRevoked(credentials);
  });
});

describe('recent login (RECENT_AUTH_MS)', () => {
  it('an access token whose login is old, even freshly refreshed, cannot mint a key or change the e-mail', async () => {
    const user = await createUser(app, { email: uniqueEmail('stale') });
    const pair = await loginPair(user);
    clock.advance(11 * MINUTE);
    const refreshed = (await refresh(pair.refreshToken)).json() as Pair;

    const key = await post('/api/v1/api-keys', { name: 'late' }, bearer(refreshed.accessToken));
    expect(key.statusCode).toBe(403);
    expect(key.json()).toMatchObject({ code: 40301 });

    const patch = await app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${user.id}`,
      headers: bearer(refreshed.accessToken),
      payload: { email: uniqueEmail('taken-over') },
    });
    expect(patch.statusCode).toBe(403);
    expect(patch.json()).toMatchObject({ code: 40301 });

    const graphql = await post(
      '/graphql',
      {
        query: 'mutation($id: ID!, $email: String) { updateUser(id: $id, input: { email: $email }) { id } }',
        variables: { id: String(user.id), email: uniqueEmail('gql') },
      },
      bearer(refreshed.accessToken),
    );
    expect(graphql.json().errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'REAUTHENTICATION_REQUIRED' });
    expect((await app.db.prisma.user.findUniqueOrThrow({ where: { id: user.id } })).email).toBe(user.email);

    // other changes need no recent login; a fresh login may do both
    const rename = await app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${user.id}`,
      headers: bearer(refreshed.accessToken),
      payload: { name: 'Renamed' },
    });
    expect(rename.statusCode).toBe(200);
    const fresh = await loginPair(user);
    expect((await post('/api/v1/api-keys', { name: 'fresh' }, bearer(fresh.accessToken))).statusCode).toBe(201);
  });

  it('a change of e-mail mails a verification to the new address and a notice to the old one', async () => {
    const user = await createUser(app, { email: uniqueEmail('mover') });
    const pair = await loginPair(user);
    const newEmail = uniqueEmail('moved');
    const notice = smtp.next(user.email);
    const verification = smtp.next(newEmail);
    const patch = await app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${user.id}`,
      headers: bearer(pair.accessToken),
      payload: { email: newEmail },
    });
    expect(patch.statusCode).toBe(200);
    expect(patch.json().data).toMatchObject({ email: newEmail, emailVerified: false });
    expect((await notice).subject).toBe('The e-mail address of your account was changed');
    expect((await notice).text).not.toContain('#token=');
    expect((await post('/auth/email/verify', { token: tokenIn(await verification) })).statusCode).toBe(204);
  });
});

describe('the last ADMIN', () => {
  it('cannot be demoted or deleted (409 40902); with a second ADMIN it can', async () => {
    await app.db.prisma.user.updateMany({ where: { role: 'ADMIN' }, data: { role: 'USER' } });
    const only = await createUser(app, { email: uniqueEmail('only-admin'), role: 'ADMIN' });
    const pair = await loginPair(only);
    const demote = await app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${only.id}`,
      headers: bearer(pair.accessToken),
      payload: { role: 'USER' },
    });
    expect(demote.statusCode).toBe(409);
    expect(demote.json()).toMatchObject({ code: 40902 });
    const remove = await app.inject({ method: 'DELETE', url: `/api/v1/users/${only.id}`, headers: bearer(pair.accessToken) });
    expect(remove.statusCode).toBe(409);
    const bulk = await app.inject({ method: 'DELETE', url: `/api/v1/users?ids=${only.id}`, headers: bearer(pair.accessToken) });
    expect(bulk.statusCode).toBe(409);
    const graphql = await post('/graphql', { query: `mutation { deleteUser(id: "${only.id}") }` }, bearer(pair.accessToken));
    expect(graphql.json().errors[0].extensions).toMatchObject({ code: 'CONFLICT' });
    expect(await app.db.prisma.user.count({ where: { id: only.id, role: 'ADMIN' } })).toBe(1);

    const second = await createUser(app, { email: uniqueEmail('second-admin'), role: 'ADMIN' });
    const demoted = await app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${only.id}`,
      headers: bearer(pair.accessToken),
      payload: { role: 'USER' },
    });
    expect(demoted.statusCode).toBe(200);
    expect(await app.db.prisma.user.findUniqueOrThrow({ where: { id: second.id } })).toMatchObject({ role: 'ADMIN' });
  });
});

/** The server's log lines, parsed, with a wait for the first line that matches (an event, not a timer). */
class LogLines {
  readonly lines: Record<string, unknown>[] = [];
  private readonly waiters = new Set<() => void>();
  readonly destination = {
    write: (line: string) => {
      this.lines.push(JSON.parse(line) as Record<string, unknown>);
      for (const wake of this.waiters) wake();
    },
  };

  async first(message: string): Promise<Record<string, unknown>> {
    for (;;) {
      const found = this.lines.find((line) => line.msg === message);
      if (found) return found;
      await new Promise<void>((resolve) => {
        const wake = () => (this.waiters.delete(wake), resolve());
        this.waiters.add(wake);
      });
    }
  }
}

describe('SMTP down', () => {
  it('a sign-up still creates the account; the refused mail is retried and arrives once the server takes it', async () => {
    const logs = new LogLines();
    const flaky = await SmtpSink.start();
    const server = await createAuthTestApp({
      logDestination: logs.destination,
      config: {
        logLevel: 'info',
        mail: { smtpUrl: flaky.url, from: 'no-reply@users-posts.test', publicUrl: 'https://app.test', retryDelaysMs: [1, 1, 1] },
      },
    });
    try {
      flaky.refuseNext = 2;
      const email = uniqueEmail('patient');
      const mail = flaky.next(email);
      const created = await server.inject({
        method: 'POST',
        url: '/api/v1/users',
        payload: { name: 'Patient', email, password: 'a fine passphrase' },
      });
      expect(created.statusCode).toBe(201);
      const token = tokenIn(await mail);
      expect(logs.lines.filter((line) => line.msg === 'mail delivery failed; retrying')).toHaveLength(2);
      expect(await logs.first('mail sent')).toMatchObject({ mail: 'email_verification', attempts: 3 });
      expect(JSON.stringify(logs.lines)).not.toContain(token);
    } finally {
      await server.close();
      await flaky.close();
    }
  });

  it('an SMTP server that cannot be reached: forgot still answers 202, and the log says the mail was not delivered', async () => {
    const logs = new LogLines();
    const gone = await SmtpSink.start();
    const url = gone.url;
    await gone.close();
    const server = await createAuthTestApp({
      logDestination: logs.destination,
      config: { logLevel: 'info', mail: { smtpUrl: url, from: 'no-reply@users-posts.test', publicUrl: 'https://app.test', retryDelaysMs: [1] } },
    });
    try {
      const user = await createUser(server, { email: uniqueEmail('unreachable') });
      expect((await server.inject({ method: 'POST', url: '/auth/password/forgot', payload: { email: user.email } })).statusCode).toBe(202);
      const failure = await logs.first('mail not delivered: the SMTP server failed every attempt');
      expect(failure).toMatchObject({ level: 50, mail: 'password_reset', attempts: 2 });
      // nothing else was lost: the account still logs in with its password
      expect((await login(server, { email: user.email, password: user.password })).statusCode).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('without SMTP_URL in development: each message is an .eml file in the outbox, its path logged, no token in the log', async () => {
    const logs = new LogLines();
    const outboxDir = mkdtempSync(path.join(os.tmpdir(), 'outbox-'));
    const server = await createAuthTestApp({
      logDestination: logs.destination,
      config: { logLevel: 'info', mail: { smtpUrl: undefined, outboxDir, from: 'no-reply@users-posts.test', publicUrl: 'http://localhost:4000' } },
    });
    try {
      const user = await createUser(server, { email: uniqueEmail('outboxed') });
      expect((await server.inject({ method: 'POST', url: '/auth/password/forgot', payload: { email: user.email } })).statusCode).toBe(202);
      const written = await logs.first('mail written to the outbox (no SMTP_URL)');
      const file = written.file as string;
      expect(path.dirname(file)).toBe(outboxDir);
      // What the README's tour does: grep the token out of the raw message (sent 7bit, so never cut across lines)
      const eml = readFileSync(file, 'utf8');
      expect(eml).toContain(`To: ${user.email}`);
      expect(eml).not.toMatch(/quoted-printable|base64/i);
      const token = /token=([A-Za-z0-9_-]+)/.exec(eml)![1]!;
      expect(JSON.stringify(logs.lines)).not.toContain(token);
      expect((await server.inject({ method: 'POST', url: '/auth/password/reset', payload: { token, newPassword: NEW_PASSWORD } })).statusCode).toBe(
        204,
      );
    } finally {
      await server.close();
    }
  });

  it('without mail configured (production without SMTP_URL): resend answers 503 50301, forgot still 202', async () => {
    const server = await createAuthTestApp();
    try {
      const user = await createUser(server, { email: uniqueEmail('unmailed') });
      const token = (await login(server, { email: user.email, password: user.password })).json().accessToken as string;
      const resend = await server.inject({ method: 'POST', url: '/auth/email/verify/resend', headers: bearer(token) });
      expect(resend.statusCode).toBe(503);
      expect(resend.json()).toMatchObject({ code: 50301 });
      expect((await server.inject({ method: 'POST', url: '/auth/password/forgot', payload: { email: user.email } })).statusCode).toBe(202);
    } finally {
      await server.close();
    }
  });
});
