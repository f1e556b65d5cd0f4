// Issue 5: the contract cannot lie. Every operation of openapi.yaml is called for real (success and error cases) and
// each response is validated independently against what the contract declares for its status: the JSON body against
// the schema (required fields, enums, formats — which fast-json-stringify does not check), required headers
// (`Location` on 201, the rate-limit headers) present and well-formed, and no undeclared status.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { createServer } from 'node:net';
import { OAUTH_TRANSACTION_COOKIE } from '../../src/auth/oauth/transaction.js';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestApp } from '../support/app.js';
import { testConfig } from '../support/config.js';
import { createAccount, TEST_PASSWORD, type Account } from '../support/accounts.js';
import { signedUrl } from '../support/auth.js';
import { Contract } from '../support/contract.js';
import { seedUsersWithPosts, type Fixture } from '../support/fixtures.js';
import { LocalOidcProvider } from '../support/oidc.js';

const contract = new Contract();

let app: FastifyInstance;
let limited: FastifyInstance;
let provider: LocalOidcProvider;
/** Stopped by the case that needs the issuer to vanish between authorize and callback. */
let flaky: LocalOidcProvider | undefined;
let alice: Account;
let bob: Account;
let admin: Account;
let fixture: Fixture;
/** Ids and tokens the cases share (filled in beforeAll, or by an earlier case). */
const state: Record<string, number | string> = {};

const UNKNOWN = 999_999;

async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  provider = await LocalOidcProvider.start();
  flaky = await LocalOidcProvider.start();
  const down = { ...provider.providerConfig('down'), issuer: `http://127.0.0.1:${await closedPort()}` };
  // The opt-in grace window (REFRESH_REUSE_GRACE_MS) makes the documented refresh 409 reachable without revoking the cast.
  // Mail to an outbox in a temporary directory, so that the operations that send it answer as they do when configured.
  app = await createTestApp({
    refreshReuseGraceMs: 60_000,
    oauthProviders: [provider.providerConfig('local'), flaky.providerConfig('flaky'), down],
    mail: { ...testConfig().mail, outboxDir: mkdtempSync(path.join(os.tmpdir(), 'responses-outbox-')) },
  });
  // A second app whose default limit is 1 request per window, to provoke a real 429.
  limited = await createTestApp({ defaultRateLimit: { max: 1, windowMs: 60_000 } });

  fixture = await seedUsersWithPosts(app.db.prisma, 3, 2);
  state.limitedToken = (await createAccount(limited, 'limited@example.com')).token;
  alice = await createAccount(app, 'alice@example.com');
  bob = await createAccount(app, 'bob@example.com');
  admin = await createAccount(app, 'admin@example.com', 'ADMIN');
  const { prisma } = app.db;
  const alicePost = await prisma.post.create({ data: { title: 'Alice writes', content: 'Hello', authorId: alice.id } });
  const comment = await prisma.comment.create({ data: { body: 'Nice', postId: alicePost.id, authorId: bob.id } });
  const order = await prisma.order.create({ data: { userId: alice.id, product: 'Widget', quantity: 1, totalCents: 500 } });
  const bobsKey = await app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: bob.headers, payload: { name: 'bob key' } });
  Object.assign(state, {
    alicePost: alicePost.id,
    comment: comment.id,
    order: order.id,
    bobsKey: bobsKey.json().data.id as number,
  });
});

afterAll(async () => {
  await app?.close();
  await limited?.close();
  await provider?.stop();
  await flaky?.stop();
});

const call = (options: InjectOptions) => app.inject(options);
const json = (method: string, url: string, payload: unknown, headers: Record<string, string> = {}) =>
  call({ method: method as 'POST', url, payload: payload as object, headers });
const malformed = (method: string, url: string, headers: Record<string, string> = {}) =>
  call({ method: method as 'POST', url, payload: '{"broken', headers: { 'content-type': 'application/json', ...headers } });
/** A signed request (service principal with the ADMIN role, not a user). */
const signed = (method: string, url: string, payload?: unknown) => {
  const body = payload === undefined ? undefined : JSON.stringify(payload);
  return call({
    method: method as 'POST',
    url: signedUrl(app, method, url, body).url,
    ...(body === undefined ? {} : { payload: body, headers: { 'content-type': 'application/json' } }),
  });
};
const badBearer = { authorization: 'Bearer not-a-token' };
const login = async (email: string) =>
  (await json('POST', '/login', { email, password: TEST_PASSWORD })).json() as { accessToken: string; refreshToken: string };
const tooLarge = (url: string, headers: Record<string, string> = {}) =>
  json('POST', url, { name: 'x'.repeat(1_100_000), email: 'big@example.com' }, headers);

/** The whole OpenID Connect login; with `stopBeforeCallback` the issuer goes away between authorize and callback. */
async function oauthLogin(
  idp: LocalOidcProvider,
  name: string,
  stopBeforeCallback = false,
  email = `oidc-${name}@example.com`,
): Promise<LightMyRequestResponse> {
  idp.claims = { sub: `contract-${name}-${email}`, email, email_verified: true, name: 'Oidc User' };
  const started = await call({ method: 'GET', url: `/auth/oauth/${name}/authorize` });
  const cookie = started.cookies.find((c) => c.name === OAUTH_TRANSACTION_COOKIE)!.value;
  const redirect = await idp.authorize(started.headers.location as string);
  if (stopBeforeCallback) await idp.stop();
  return call({ method: 'GET', url: `${redirect.pathname}${redirect.search}`, cookies: { [OAUTH_TRANSACTION_COOKIE]: cookie } });
}

interface Case {
  operationId: string;
  status: number;
  name: string;
  request: () => Promise<LightMyRequestResponse>;
}

const ops = (operationId: string, cases: [status: number, name: string, request: () => Promise<LightMyRequestResponse>][]): Case[] =>
  cases.map(([status, name, request]) => ({ operationId, status, name, request }));

const aliceUrl = () => `/api/v1/users/${alice.id}`;

/** THE table: every operationId of openapi.yaml, with real success and error requests. Cases run in this order. */
const cases: Case[] = [
  ...ops('getHealth', [
    [200, 'alive', () => call({ method: 'GET', url: '/healthz' })],
    [
      401,
      'a presented credential that fails (found by the fuzz: undeclared before)',
      () => call({ method: 'GET', url: '/healthz', headers: badBearer }),
    ],
    [
      429,
      'over the limit (app limited to 1 request per window)',
      async () => {
        await limited.inject({ method: 'GET', url: '/healthz' });
        return limited.inject({ method: 'GET', url: '/healthz' });
      },
    ],
  ]),
  ...ops('getReadiness', [
    [200, 'database answers', () => call({ method: 'GET', url: '/readyz' })],
    [401, 'half a signed request (found by the fuzz: undeclared before)', () => call({ method: 'GET', url: '/readyz?timestamp=' })],
    [
      503,
      'database closed underneath the app',
      async () => {
        const unready = await createTestApp();
        await unready.db.close();
        try {
          return await unready.inject({ method: 'GET', url: '/readyz' });
        } finally {
          await unready.close();
        }
      },
    ],
  ]),
  ...ops('login', [
    [200, 'token pair', () => json('POST', '/login', { email: alice.email, password: TEST_PASSWORD })],
    [200, 'session', () => json('POST', '/login', { email: alice.email, password: TEST_PASSWORD, session: true })],
    [401, 'wrong password', () => json('POST', '/login', { email: alice.email, password: 'wrong-password' })],
    [
      401,
      'a bad Bearer header (found by the fuzz: was a 500, the envelope failing LoginFailure)',
      () => json('POST', '/login', { email: alice.email, password: TEST_PASSWORD }, badBearer),
    ],
    [422, 'no password', () => json('POST', '/login', { email: alice.email })],
    [400, 'malformed JSON', () => malformed('POST', '/login')],
    [413, 'body over 1 MiB', () => tooLarge('/login')],
  ]),
  ...ops('refreshTokens', [
    [
      200,
      'rotation',
      async () => {
        const { refreshToken } = await login(bob.email);
        state.spentRefresh = refreshToken;
        return json('POST', '/auth/refresh', { refreshToken });
      },
    ],
    [409, 'same token again within the opt-in grace window', () => json('POST', '/auth/refresh', { refreshToken: state.spentRefresh })],
    [401, 'not a token', () => json('POST', '/auth/refresh', { refreshToken: 'garbage' })],
    [422, 'no refreshToken', () => json('POST', '/auth/refresh', {})],
  ]),
  ...ops('logout', [
    [
      204,
      'with a fresh token and its refresh token',
      async () => {
        const tokens = await login(bob.email);
        return json('POST', '/logout', { refreshToken: tokens.refreshToken }, { authorization: `Bearer ${tokens.accessToken}` });
      },
    ],
    [401, 'without credentials', () => call({ method: 'POST', url: '/logout' })],
    [401, 'bad bearer token', () => call({ method: 'POST', url: '/logout', headers: badBearer })],
  ]),
  ...ops('changePassword', [
    [
      200,
      'a fresh pair for the same sign-in',
      async () => {
        const carol = await createAccount(app, 'carol@example.com');
        return json('POST', '/auth/password', { currentPassword: TEST_PASSWORD, newPassword: 'a brand new passphrase' }, carol.headers);
      },
    ],
    [
      401,
      'wrong current password',
      () => json('POST', '/auth/password', { currentPassword: 'not the password', newPassword: 'a brand new passphrase' }, bob.headers),
    ],
    [
      422,
      'a commonly used new password',
      () => json('POST', '/auth/password', { currentPassword: TEST_PASSWORD, newPassword: 'password123' }, bob.headers),
    ],
    [
      403,
      'signed request (no sign-in)',
      () => signed('POST', '/auth/password', { currentPassword: TEST_PASSWORD, newPassword: 'a brand new passphrase' }),
    ],
  ]),
  ...ops('forgotPassword', [
    [202, 'an address with an account', () => json('POST', '/auth/password/forgot', { email: alice.email })],
    [422, 'no email', () => json('POST', '/auth/password/forgot', {})],
  ]),
  ...ops('resetPassword', [
    [
      204,
      'a live token',
      async () => {
        const dave = await createAccount(app, 'dave@example.com');
        const token = await app.identity.accountTokens.issue(dave.id, 'password_reset', dave.email);
        return json('POST', '/auth/password/reset', { token, newPassword: 'a brand new passphrase' });
      },
    ],
    [400, 'an unknown token', () => json('POST', '/auth/password/reset', { token: 'no-such-token', newPassword: 'a brand new passphrase' })],
    [422, 'no newPassword', () => json('POST', '/auth/password/reset', { token: 'no-such-token' })],
  ]),
  ...ops('verifyEmail', [
    [
      204,
      'a live token',
      async () => {
        const erin = await createAccount(app, 'erin@example.com');
        return json('POST', '/auth/email/verify', { token: await app.identity.accountTokens.issue(erin.id, 'email_verification', erin.email) });
      },
    ],
    [400, 'an unknown token', () => json('POST', '/auth/email/verify', { token: 'no-such-token' })],
  ]),
  ...ops('trustLoginAddress', [
    [
      204,
      'a live token',
      async () => {
        const fay = await createAccount(app, 'fay@example.com');
        const token = await app.identity.accountTokens.issue(fay.id, 'address_trust', fay.email);
        return json('POST', '/auth/login/trust-address', { token });
      },
    ],
    [400, 'an unknown token', () => json('POST', '/auth/login/trust-address', { token: 'no-such-token' })],
    [422, 'no token', () => json('POST', '/auth/login/trust-address', {})],
  ]),
  ...ops('resendVerification', [
    [202, 'to the caller', () => call({ method: 'POST', url: '/auth/email/verify/resend', headers: bob.headers })],
    [401, 'anonymous', () => call({ method: 'POST', url: '/auth/email/verify/resend' })],
    [
      503,
      'no mail configured',
      () => limited.inject({ method: 'POST', url: '/auth/email/verify/resend', headers: { authorization: `Bearer ${state.limitedToken}` } }),
    ],
  ]),
  ...ops('listSessions', [
    [200, 'own sign-ins', () => call({ method: 'GET', url: '/api/v1/sessions', headers: alice.headers })],
    [400, 'pageSize 0', () => call({ method: 'GET', url: '/api/v1/sessions?pageSize=0', headers: alice.headers })],
    [401, 'anonymous', () => call({ method: 'GET', url: '/api/v1/sessions' })],
  ]),
  ...ops('deleteSession', [
    [
      204,
      'one of the caller’s',
      async () => {
        const { accessToken } = await login(bob.email);
        const sid = JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()).sid as string;
        return call({ method: 'DELETE', url: `/api/v1/sessions/${sid}`, headers: bob.headers });
      },
    ],
    [404, 'not the caller’s', () => call({ method: 'DELETE', url: '/api/v1/sessions/6f1c2b9e-7d4a-4e3b-9a51-0c8d2e7f4a10', headers: bob.headers })],
    [401, 'anonymous', () => call({ method: 'DELETE', url: '/api/v1/sessions/6f1c2b9e-7d4a-4e3b-9a51-0c8d2e7f4a10' })],
  ]),
  ...ops('listOAuthLinks', [
    [200, 'own links', () => call({ method: 'GET', url: '/api/v1/oauth-links', headers: alice.headers })],
    [400, 'pageSize 0', () => call({ method: 'GET', url: '/api/v1/oauth-links?pageSize=0', headers: alice.headers })],
    [401, 'anonymous', () => call({ method: 'GET', url: '/api/v1/oauth-links' })],
  ]),
  ...ops('deleteOAuthLink', [
    [
      204,
      'one of the caller’s',
      async () => {
        const link = await app.db.prisma.oAuthAccount.create({ data: { provider: 'local', subject: 'contract-unlinked', userId: bob.id } });
        return call({ method: 'DELETE', url: `/api/v1/oauth-links/${link.id}`, headers: bob.headers });
      },
    ],
    [404, 'not the caller’s', () => call({ method: 'DELETE', url: `/api/v1/oauth-links/${UNKNOWN}`, headers: bob.headers })],
    [400, 'non-numeric id', () => call({ method: 'DELETE', url: '/api/v1/oauth-links/abc', headers: bob.headers })],
    [401, 'anonymous', () => call({ method: 'DELETE', url: `/api/v1/oauth-links/${UNKNOWN}` })],
  ]),
  ...ops('listApiKeys', [
    [200, 'own keys', () => call({ method: 'GET', url: '/api/v1/api-keys', headers: bob.headers })],
    [401, 'anonymous', () => call({ method: 'GET', url: '/api/v1/api-keys' })],
    [403, 'signed request (no user)', () => signed('GET', '/api/v1/api-keys')],
  ]),
  ...ops('createApiKey', [
    [
      201,
      'created with Location',
      async () => {
        const response = await json('POST', '/api/v1/api-keys', { name: 'ci' }, alice.headers);
        state.aliceKey = response.json().data.id;
        return response;
      },
    ],
    [422, 'no name', () => json('POST', '/api/v1/api-keys', {}, alice.headers)],
    [401, 'anonymous', () => json('POST', '/api/v1/api-keys', { name: 'ci' })],
    [403, 'signed request (no user)', () => signed('POST', '/api/v1/api-keys', { name: 'ci' })],
  ]),
  ...ops('deleteApiKey', [
    [204, 'own key', () => call({ method: 'DELETE', url: `/api/v1/api-keys/${state.aliceKey}`, headers: alice.headers })],
    [403, "another user's key", () => call({ method: 'DELETE', url: `/api/v1/api-keys/${state.bobsKey}`, headers: alice.headers })],
    [400, 'non-numeric id', () => call({ method: 'DELETE', url: '/api/v1/api-keys/abc', headers: alice.headers })],
    [401, 'anonymous', () => call({ method: 'DELETE', url: `/api/v1/api-keys/${state.bobsKey}` })],
  ]),
  ...ops('oauthAuthorize', [
    [302, 'redirect to the provider', () => call({ method: 'GET', url: '/auth/oauth/local/authorize?session=true' })],
    [
      401,
      'a presented API key that fails (found by the fuzz: undeclared before)',
      () => call({ method: 'GET', url: '/auth/oauth/local/authorize?api_key=nope' }),
    ],
    [
      403,
      'link asked with an API key (needs a session or Bearer)',
      async () => {
        const created = await json('POST', '/api/v1/api-keys', { name: 'link' }, bob.headers);
        return call({ method: 'GET', url: `/auth/oauth/local/authorize?link=true&api_key=${encodeURIComponent(created.json().data.key)}` });
      },
    ],
    [404, 'unknown provider', () => call({ method: 'GET', url: '/auth/oauth/nope/authorize' })],
    [503, 'issuer unreachable', () => call({ method: 'GET', url: '/auth/oauth/down/authorize' })],
  ]),
  ...ops('oauthCallback', [
    [200, 'full flow against the local provider', () => oauthLogin(provider, 'local')],
    [400, 'provider reported an error', () => call({ method: 'GET', url: '/auth/oauth/local/callback?state=s&error=access_denied' })],
    [401, 'no transaction (state mismatch)', () => call({ method: 'GET', url: '/auth/oauth/local/callback?state=s&code=c' })],
    [404, 'unknown provider', () => call({ method: 'GET', url: '/auth/oauth/nope/callback?state=s&code=c' })],
    [409, 'the address of an account this service never verified', () => oauthLogin(provider, 'local', false, alice.email)],
    [422, 'a profile address sign-up refuses (no dot in the domain)', () => oauthLogin(provider, 'local', false, 'nodot@localhost')],
    [
      503,
      'issuer gone between authorize and callback',
      async () => {
        const idp = flaky!;
        flaky = undefined;
        return oauthLogin(idp, 'flaky', true);
      },
    ],
  ]),
  ...ops('listUsers', [
    [200, 'page envelope', () => call({ method: 'GET', url: '/api/v1/users' })],
    [200, 'offset paging', () => call({ method: 'GET', url: '/api/v1/users?offset=1&limit=2' })],
    [200, 'cursor envelope', () => call({ method: 'GET', url: '/api/v1/users?cursor=&limit=2' })],
    [200, 'fields selection', () => call({ method: 'GET', url: '/api/v1/users?fields=name&role=USER&q=user' })],
    [400, 'pageSize over 100', () => call({ method: 'GET', url: '/api/v1/users?pageSize=101' })],
    [400, 'unknown sort field', () => call({ method: 'GET', url: '/api/v1/users?sort=password' })],
    [400, 'malformed cursor', () => call({ method: 'GET', url: '/api/v1/users?cursor=%%%' })],
    [401, 'presented credentials fail', () => call({ method: 'GET', url: '/api/v1/users', headers: badBearer })],
  ]),
  ...ops('createUser', [
    [
      201,
      'sign-up with Location',
      () => json('POST', '/api/v1/users', { name: 'New', email: 'new@example.com', age: 30, password: 'long-enough-1' }),
    ],
    [409, 'email taken', () => json('POST', '/api/v1/users', { name: 'Dup', email: 'ALICE@example.com' })],
    [422, 'invalid email and age', () => json('POST', '/api/v1/users', { name: 'Bad', email: 'nope', age: -1 })],
    [400, 'malformed JSON', () => malformed('POST', '/api/v1/users')],
    [413, 'body over 1 MiB', () => tooLarge('/api/v1/users')],
    [401, 'presented credentials fail', () => json('POST', '/api/v1/users', { name: 'X', email: 'x@example.com' }, badBearer)],
    [
      415,
      'a body that is not JSON',
      () => call({ method: 'POST', url: '/api/v1/users', headers: { 'content-type': 'text/csv' }, payload: 'name,email' }),
    ],
  ]),
  ...ops('batchCreateUsers', [
    [
      201,
      'two users with Location',
      () =>
        json(
          'POST',
          '/api/v1/users/batch',
          {
            users: [
              { name: 'G', email: 'grace@example.com', age: 85 },
              { name: 'A', email: 'alan@example.com' },
            ],
          },
          admin.headers,
        ),
    ],
    [
      422,
      'second user invalid',
      () =>
        json(
          'POST',
          '/api/v1/users/batch',
          {
            users: [
              { name: 'O', email: 'ok@example.com' },
              { name: 'B', email: 'bad' },
            ],
          },
          admin.headers,
        ),
    ],
    [409, 'duplicate email', () => json('POST', '/api/v1/users/batch', { users: [{ name: 'A', email: 'alice@example.com' }] }, admin.headers)],
    [403, 'not ADMIN', () => json('POST', '/api/v1/users/batch', { users: [{ name: 'Z', email: 'z@example.com' }] }, alice.headers)],
    [401, 'anonymous', () => json('POST', '/api/v1/users/batch', { users: [{ name: 'Z', email: 'z@example.com' }] })],
  ]),
  ...ops('bulkUpdateUsers', [
    [
      200,
      'ADMIN updates',
      () => json('PATCH', '/api/v1/users', { ids: [fixture.users[1]!.id, fixture.users[2]!.id, UNKNOWN], data: { age: 40 } }, admin.headers),
    ],
    [200, 'signed request (service principal)', () => signed('PATCH', '/api/v1/users', { ids: [fixture.users[1]!.id], data: { age: 41 } })],
    [
      409,
      'one email for two users',
      () => json('PATCH', '/api/v1/users', { ids: [fixture.users[1]!.id, fixture.users[2]!.id], data: { email: 'same@example.com' } }, admin.headers),
    ],
    [422, 'empty ids', () => json('PATCH', '/api/v1/users', { ids: [], data: { age: 1 } }, admin.headers)],
    [403, 'not ADMIN', () => json('PATCH', '/api/v1/users', { ids: [alice.id], data: { age: 1 } }, alice.headers)],
    [401, 'anonymous', () => json('PATCH', '/api/v1/users', { ids: [alice.id], data: { age: 1 } })],
  ]),
  ...ops('getUser', [
    [200, 'existing', () => call({ method: 'GET', url: aliceUrl() })],
    [404, 'unknown id', () => call({ method: 'GET', url: `/api/v1/users/${UNKNOWN}` })],
    [400, 'non-numeric id', () => call({ method: 'GET', url: '/api/v1/users/abc' })],
    [
      406,
      'Accept names another version than the path',
      () => call({ method: 'GET', url: aliceUrl(), headers: { accept: 'application/vnd.api.v2+json' } }),
    ],
    [414, 'a path parameter longer than the server reads', () => call({ method: 'GET', url: `/api/v1/users/${'1'.repeat(200)}` })],
  ]),
  ...ops('replaceUser', [
    [200, 'self', () => json('PUT', aliceUrl(), { name: 'Alice', email: 'alice@example.com', age: 33 }, alice.headers)],
    [403, 'another user', () => json('PUT', aliceUrl(), { name: 'Bob', email: 'bob2@example.com' }, bob.headers)],
    [404, 'ADMIN, unknown user', () => json('PUT', `/api/v1/users/${UNKNOWN}`, { name: 'N', email: 'n@example.com' }, admin.headers)],
    [409, "another user's email", () => json('PUT', aliceUrl(), { name: 'Alice', email: 'bob@example.com' }, alice.headers)],
    [422, 'no name', () => json('PUT', aliceUrl(), { email: 'alice@example.com' }, alice.headers)],
    [401, 'anonymous', () => json('PUT', aliceUrl(), { name: 'Alice', email: 'alice@example.com' })],
  ]),
  ...ops('updateUser', [
    [200, 'self, clearing age', () => json('PATCH', aliceUrl(), { age: null }, alice.headers)],
    [200, 'ADMIN sets a role', () => json('PATCH', `/api/v1/users/${fixture.users[2]!.id}`, { role: 'USER' }, admin.headers)],
    [403, 'role from a non-ADMIN', () => json('PATCH', aliceUrl(), { role: 'ADMIN' }, alice.headers)],
    [404, 'ADMIN, unknown user', () => json('PATCH', `/api/v1/users/${UNKNOWN}`, { age: 1 }, admin.headers)],
    [409, "another user's email", () => json('PATCH', aliceUrl(), { email: 'bob@example.com' }, alice.headers)],
    [422, 'no field', () => json('PATCH', aliceUrl(), {}, alice.headers)],
    [400, 'malformed JSON', () => malformed('PATCH', aliceUrl(), alice.headers)],
  ]),
  ...ops('listUserPosts', [
    [200, 'page envelope', () => call({ method: 'GET', url: `/api/v1/users/${fixture.users[0]!.id}/posts` })],
    [200, 'cursor envelope', () => call({ method: 'GET', url: `/api/v1/users/${fixture.users[0]!.id}/posts?cursor=&limit=1` })],
    [404, 'unknown user', () => call({ method: 'GET', url: `/api/v1/users/${UNKNOWN}/posts` })],
    [400, 'unknown sort field', () => call({ method: 'GET', url: `${aliceUrl()}/posts?sort=secret` })],
  ]),
  ...ops('createUserPost', [
    [201, 'own post with Location', () => json('POST', `${aliceUrl()}/posts`, { title: 'T', content: 'C' }, alice.headers)],
    [403, "another user's posts", () => json('POST', `${aliceUrl()}/posts`, { title: 'T', content: 'C' }, bob.headers)],
    [404, 'ADMIN, unknown user', () => json('POST', `/api/v1/users/${UNKNOWN}/posts`, { title: 'T', content: 'C' }, admin.headers)],
    [422, 'empty title', () => json('POST', `${aliceUrl()}/posts`, { title: '', content: 'C' }, alice.headers)],
    [401, 'anonymous', () => json('POST', `${aliceUrl()}/posts`, { title: 'T', content: 'C' })],
  ]),
  ...ops('getUserPost', [
    [200, 'existing', () => call({ method: 'GET', url: `${aliceUrl()}/posts/${state.alicePost}` })],
    [404, "someone else's post", () => call({ method: 'GET', url: `/api/v1/users/${bob.id}/posts/${state.alicePost}` })],
    [400, 'non-numeric postId', () => call({ method: 'GET', url: `${aliceUrl()}/posts/abc` })],
  ]),
  ...ops('listUserOrders', [
    [200, 'own orders', () => call({ method: 'GET', url: `${aliceUrl()}/orders`, headers: alice.headers })],
    [
      200,
      'cursor envelope (ADMIN)',
      () => call({ method: 'GET', url: `${aliceUrl()}/orders?cursor=&limit=1&status=pending`, headers: admin.headers }),
    ],
    [403, "another user's orders", () => call({ method: 'GET', url: `${aliceUrl()}/orders`, headers: bob.headers })],
    [404, 'ADMIN, unknown user', () => call({ method: 'GET', url: `/api/v1/users/${UNKNOWN}/orders`, headers: admin.headers })],
    [400, 'bad status filter', () => call({ method: 'GET', url: `${aliceUrl()}/orders?status=lost`, headers: alice.headers })],
    [401, 'anonymous', () => call({ method: 'GET', url: `${aliceUrl()}/orders` })],
  ]),
  ...ops('createUserOrder', [
    [201, 'own order with Location', () => json('POST', `${aliceUrl()}/orders`, { product: 'Gadget', quantity: 2, totalCents: 1500 }, alice.headers)],
    [403, "another user's orders", () => json('POST', `${aliceUrl()}/orders`, { product: 'G', quantity: 1, totalCents: 1 }, bob.headers)],
    [404, 'ADMIN, unknown user', () => json('POST', `/api/v1/users/${UNKNOWN}/orders`, { product: 'G', quantity: 1, totalCents: 1 }, admin.headers)],
    [422, 'quantity 0', () => json('POST', `${aliceUrl()}/orders`, { product: 'G', quantity: 0, totalCents: 1 }, alice.headers)],
  ]),
  ...ops('getUserOrder', [
    [200, 'own order', () => call({ method: 'GET', url: `${aliceUrl()}/orders/${state.order}`, headers: alice.headers })],
    [403, "another user's order", () => call({ method: 'GET', url: `${aliceUrl()}/orders/${state.order}`, headers: bob.headers })],
    [404, 'unknown order', () => call({ method: 'GET', url: `${aliceUrl()}/orders/${UNKNOWN}`, headers: alice.headers })],
  ]),
  ...ops('updateUserOrder', [
    [200, 'ADMIN marks paid', () => json('PATCH', `${aliceUrl()}/orders/${state.order}`, { status: 'paid' }, admin.headers)],
    [403, 'owner may only cancel', () => json('PATCH', `${aliceUrl()}/orders/${state.order}`, { status: 'shipped' }, alice.headers)],
    [200, 'owner cancels', () => json('PATCH', `${aliceUrl()}/orders/${state.order}`, { status: 'cancelled' }, alice.headers)],
    [404, 'unknown order', () => json('PATCH', `${aliceUrl()}/orders/${UNKNOWN}`, { status: 'cancelled' }, alice.headers)],
    [422, 'unknown status', () => json('PATCH', `${aliceUrl()}/orders/${state.order}`, { status: 'lost' }, alice.headers)],
  ]),
  ...ops('listPosts', [
    [200, 'page envelope', () => call({ method: 'GET', url: '/api/v1/posts?authorId=' + fixture.users[0]!.id })],
    [200, 'cursor envelope with fields', () => call({ method: 'GET', url: '/api/v1/posts?cursor=&limit=2&fields=title' })],
    [400, 'limit 0', () => call({ method: 'GET', url: '/api/v1/posts?limit=0' })],
  ]),
  ...ops('getPost', [
    [200, 'existing', () => call({ method: 'GET', url: `/api/v1/posts/${state.alicePost}` })],
    [404, 'unknown id', () => call({ method: 'GET', url: `/api/v1/posts/${UNKNOWN}` })],
    [400, 'id 0', () => call({ method: 'GET', url: '/api/v1/posts/0' })],
  ]),
  ...ops('createPostComment', [
    [201, 'comment with Location', () => json('POST', `/api/v1/posts/${state.alicePost}/comments`, { body: 'Agreed' }, bob.headers)],
    [404, 'unknown post', () => json('POST', `/api/v1/posts/${UNKNOWN}/comments`, { body: 'Hm' }, bob.headers)],
    [403, 'signed request (no user)', () => signed('POST', `/api/v1/posts/${state.alicePost}/comments`, { body: 'Hm' })],
    [422, 'empty body', () => json('POST', `/api/v1/posts/${state.alicePost}/comments`, { body: '' }, bob.headers)],
    [401, 'anonymous', () => json('POST', `/api/v1/posts/${state.alicePost}/comments`, { body: 'Hm' })],
  ]),
  ...ops('listComments', [
    [200, 'page envelope by post', () => call({ method: 'GET', url: `/api/v1/comments?postId=${state.alicePost}` })],
    [200, 'cursor envelope by author', () => call({ method: 'GET', url: `/api/v1/comments?cursor=&limit=1&userId=${bob.id}` })],
    [400, 'unknown field', () => call({ method: 'GET', url: '/api/v1/comments?fields=secret' })],
  ]),
  ...ops('getComment', [
    [200, 'existing', () => call({ method: 'GET', url: `/api/v1/comments/${state.comment}` })],
    [404, 'unknown id', () => call({ method: 'GET', url: `/api/v1/comments/${UNKNOWN}` })],
  ]),
  // Destructive operations last.
  ...ops('deleteUser', [
    [204, 'ADMIN deletes', () => call({ method: 'DELETE', url: `/api/v1/users/${fixture.users[2]!.id}`, headers: admin.headers })],
    [204, 'idempotent: already gone', () => call({ method: 'DELETE', url: `/api/v1/users/${fixture.users[2]!.id}`, headers: admin.headers })],
    [403, 'not ADMIN', () => call({ method: 'DELETE', url: `/api/v1/users/${bob.id}`, headers: alice.headers })],
    [400, 'non-numeric id', () => call({ method: 'DELETE', url: '/api/v1/users/abc', headers: admin.headers })],
    [401, 'anonymous', () => call({ method: 'DELETE', url: `/api/v1/users/${bob.id}` })],
  ]),
  ...ops('bulkDeleteUsers', [
    [200, 'ADMIN deletes', () => call({ method: 'DELETE', url: `/api/v1/users?ids=${fixture.users[1]!.id},${UNKNOWN}`, headers: admin.headers })],
    [400, 'no ids', () => call({ method: 'DELETE', url: '/api/v1/users', headers: admin.headers })],
    [400, 'id 0', () => call({ method: 'DELETE', url: '/api/v1/users?ids=0', headers: admin.headers })],
    [403, 'not ADMIN', () => call({ method: 'DELETE', url: `/api/v1/users?ids=${bob.id}`, headers: alice.headers })],
  ]),
];

describe('responses validate against openapi.yaml', () => {
  it.each(cases.map((c) => [`${c.operationId} ${c.status} ${c.name}`, c] as const))('%s', async (_title, c) => {
    const response = await c.request();
    const problems = contract.check(c.operationId, response);
    // The status first (the table says what each request should provoke), then every contract violation at once.
    expect({ status: response.statusCode, problems }).toEqual({ status: c.status, problems: [] });
  });

  it('the checker itself catches a lying response (so a green walk means something)', async () => {
    const real = await call({ method: 'GET', url: aliceUrl() });
    expect(contract.check('getUser', real)).toEqual([]);
    const user = real.json().data as Record<string, unknown>;
    const lie = (body: unknown, status = 200, headers: Record<string, unknown> = real.headers) =>
      contract.check('getUser', { statusCode: status, headers, body: JSON.stringify(body) });
    const { email: _email, ...withoutEmail } = user;
    expect(lie({ code: 0, message: 'ok', data: withoutEmail }).join()).toMatch(/must have required property 'email'/);
    expect(lie({ code: 0, message: 'ok', data: { ...user, role: 'KING' } }).join()).toMatch(/must be equal to one of the allowed values/);
    expect(lie({ code: 0, message: 'ok', data: { ...user, createdAt: 'yesterday' } }).join()).toMatch(/must match format "date-time"/);
    expect(lie({ code: 0, message: 'ok', data: { ...user, email: 'not-an-email' } }).join()).toMatch(/must match format "email"/);
    expect(lie({ code: 40400 }, 404).join()).toMatch(/must have required property 'message'/);
    expect(lie({ code: 40900, message: 'x' }, 409).join()).toMatch(/does not declare/);
    const { 'x-ratelimit-limit': _limit, ...withoutLimit } = real.headers;
    expect(lie(real.json(), 200, withoutLimit).join()).toMatch(/required header X-RateLimit-Limit is missing/);
    const created = await json('POST', '/api/v1/users', { name: 'Loc', email: 'loc@example.com' });
    const { location: _location, ...withoutLocation } = created.headers;
    expect(contract.check('createUser', { ...created, headers: withoutLocation, body: created.body })).toEqual([
      'required header Location is missing',
    ]);
  });

  it('the table covers every operation of the contract, each with a success and an error case', () => {
    const covered = new Map<string, Set<number>>();
    for (const c of cases) covered.set(c.operationId, (covered.get(c.operationId) ?? new Set()).add(c.status));
    const missing = [...contract.operations.keys()].filter((id) => !covered.has(id));
    const unknown = [...covered.keys()].filter((id) => !contract.operations.has(id));
    const lopsided = [...covered].filter(([, statuses]) => ![...statuses].some((s) => s < 400) || ![...statuses].some((s) => s >= 400));
    expect({ missing, unknown, lopsided: lopsided.map(([id]) => id) }).toEqual({ missing: [], unknown: [], lopsided: [] });
  });
});
