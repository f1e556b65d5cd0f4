// Signed requests (SPEC §3): the canonical string against an independent computation, and every rejection over HTTP.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { createHash, createHmac } from 'node:crypto';
import { ManualClock } from '../../src/auth/clock.js';
import { canonicalString, sign } from '../../src/auth/credentials/signature.js';
import {
  bearer,
  createAuthTestApp,
  createUser,
  expectForbidden,
  expectUnauthenticated,
  signedUrl,
  accessTokenOf,
  type TestUser,
} from '../support/auth.js';

const MINUTE = 60_000;
const WINDOW = 5 * MINUTE;
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

let app: FastifyInstance;
let clock: ManualClock;
let user: TestUser;

beforeAll(async () => {
  clock = new ManualClock(Date.parse('2026-11-22T10:00:00Z'));
  app = await createAuthTestApp({ clock, config: { rateLimits: { loginMax: 1000, refreshMax: 1000 } } });
  await createUser(app, { email: 'root@example.com', role: 'ADMIN' });
  user = await createUser(app, { email: 'ursula@example.com' });
});
afterAll(() => app.close());

/** A signed request at the app's clock, unless the options say otherwise. */
function signed(method: 'GET' | 'POST' | 'DELETE', url: string, body?: string, options: Parameters<typeof signedUrl>[4] = {}) {
  return signedUrl(app, method, url, body, { timestamp: clock.now(), ...options });
}
function send(method: 'GET' | 'POST' | 'DELETE', url: string, body?: string) {
  return app.inject({ method, url, ...(body === undefined ? {} : { payload: body, headers: { 'content-type': 'application/json' } }) });
}
const graphqlBody = (query: string) => JSON.stringify({ query });
const userExists = async (id: number) => (await app.db.prisma.user.count({ where: { id } })) === 1;

describe('canonical string (SPEC §3)', () => {
  it('matches an independent computation: upper-case method, path without query, sorted encoded query without signature, body SHA-256', () => {
    const body = '{"name":"Zoë"}';
    const url = '/api/v1/things?z=last&tag=b&a=2&tag=a&timestamp=1700000000000&nonce=n%201&signature=ignored&q=caf%C3%A9%20%26%20co%3D1';
    const bodyHash = createHash('sha256').update(Buffer.from(body, 'utf8')).digest('hex');
    const expected = [
      'POST',
      '/api/v1/things',
      'a=2&nonce=n%201&q=caf%C3%A9%20%26%20co%3D1&tag=a&tag=b&timestamp=1700000000000&z=last',
      bodyHash,
    ].join('\n');
    expect(canonicalString('post', url, body)).toBe(expected);
    expect(canonicalString('post', url, Buffer.from(body, 'utf8'))).toBe(expected);
    const secret = 'a-signing-secret-of-at-least-32-bytes!!';
    expect(sign(secret, 'post', url, body)).toBe(createHmac('sha256', secret).update(expected, 'utf8').digest('hex'));
    expect(sign(secret, 'post', url, body)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('hashes the empty string when there is no body, and keeps an empty query line', () => {
    expect(canonicalString('get', '/api/v1/users', undefined)).toBe(`GET\n/api/v1/users\n\n${EMPTY_SHA256}`);
    expect(canonicalString('GET', '/api/v1/users?signature=abc', '')).toBe(`GET\n/api/v1/users\n\n${EMPTY_SHA256}`);
    expect(canonicalString('DELETE', '/api/v1/api-keys/7?nonce=x&timestamp=1', Buffer.alloc(0))).toBe(
      `DELETE\n/api/v1/api-keys/7\nnonce=x&timestamp=1\n${EMPTY_SHA256}`,
    );
  });

  it('sorts by key, then by value, for repeated keys', () => {
    expect(canonicalString('GET', '/p?b=2&a=3&b=1&a=10', undefined).split('\n')[2]).toBe('a=10&a=3&b=1&b=2');
  });

  it('changes with each of method, path, query and body', () => {
    const base = sign('s', 'GET', '/p?a=1', '');
    expect(
      new Set([
        base,
        sign('s', 'POST', '/p?a=1', ''),
        sign('s', 'GET', '/q?a=1', ''),
        sign('s', 'GET', '/p?a=2', ''),
        sign('s', 'GET', '/p?a=1', 'x'),
      ]).size,
    ).toBe(5);
    expect(sign('s', 'GET', '/p?a=1&signature=whatever', '')).toBe(base);
  });
});

describe('a valid signed request acts as the ADMIN service principal', () => {
  it('succeeds on GET /api/v1/users, query parameters included', async () => {
    const plain = signed('GET', '/api/v1/users');
    const response = await send('GET', plain.url);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ code: 0, data: { total: 2 } });

    const withQuery = signed('GET', '/api/v1/users?pageSize=1&page=2&sort=email');
    const paged = await send('GET', withQuery.url);
    expect(paged.statusCode).toBe(200);
    expect(paged.json().data).toMatchObject({ page: 2, pageSize: 1, items: [{ email: user.email }] });
  });

  it('passes authentication on a protected operation: 403 (not 401) where a user account is required', async () => {
    expectUnauthenticated(await send('GET', '/api/v1/api-keys'));
    expectForbidden(await send('GET', signed('GET', '/api/v1/api-keys').url));
    expectForbidden(await send('POST', signed('POST', '/logout').url));

    const body = JSON.stringify({ name: 'service key' });
    expectForbidden(await send('POST', signed('POST', '/api/v1/api-keys', body).url, body));
    expect(await app.db.prisma.apiKey.count()).toBe(0);
  });

  it('holds the ADMIN role: deletes a user through the ADMIN-only GraphQL deleteUser (a signed POST body)', async () => {
    const victim = await createUser(app, { email: 'victim@example.com' });
    const mutation = graphqlBody(`mutation { deleteUser(id: ${victim.id}) }`);

    const asUser = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', ...bearer(await accessTokenOf(app, user)) },
      payload: mutation,
    });
    expect(asUser.json().errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await userExists(victim.id)).toBe(true);

    const response = await send('POST', signed('POST', '/graphql', mutation).url, mutation);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ data: { deleteUser: true } });
    expect(await userExists(victim.id)).toBe(false);
  });
});

describe('rejections: 401 with code 40100 and `error`, and nothing happens', () => {
  it('a tampered signature', async () => {
    const { unsigned, signature } = signed('GET', '/api/v1/users');
    const flipped = `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`;
    expectUnauthenticated(await send('GET', `${unsigned}&signature=${flipped}`));
    expectUnauthenticated(await send('GET', `${unsigned}&signature=${signature.slice(0, 32)}`));
    expectUnauthenticated(await send('GET', `${unsigned}&signature=`));
  });

  it('a signature made with another secret', async () => {
    expectUnauthenticated(await send('GET', signed('GET', '/api/v1/users', undefined, { secret: 'x'.repeat(48) }).url));
  });

  it('a body changed after signing (and the mutation it carried does not run)', async () => {
    const target = await createUser(app, { email: 'target@example.com' });
    const decoy = await createUser(app, { email: 'decoy@example.com' });
    const { url } = signed('POST', '/graphql', graphqlBody(`mutation { deleteUser(id: ${decoy.id}) }`));
    const tampered = graphqlBody(`mutation { deleteUser(id: ${target.id}) }`);
    const response = await send('POST', url, tampered);
    expect(response.statusCode).toBe(401);
    expect(response.json().errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await userExists(target.id)).toBe(true);
    expect(await userExists(decoy.id)).toBe(true);

    const body = JSON.stringify({ name: 'signed name' });
    const rest = signed('POST', '/api/v1/api-keys', body);
    expectUnauthenticated(await send('POST', rest.url, JSON.stringify({ name: 'other name' })));
    expectUnauthenticated(await send('POST', rest.url));
  });

  it('a request whose method, path or query differs from what was signed', async () => {
    const { url, unsigned, signature } = signed('GET', '/api/v1/users');
    expectUnauthenticated(await send('DELETE', url));
    expectUnauthenticated(await send('GET', url.replace('/api/v1/users', `/api/v1/users/${user.id}`)));
    expectUnauthenticated(await send('GET', `${unsigned}&page=2&signature=${signature}`));
  });

  it.each(['timestamp', 'nonce', 'signature'])('a request missing `%s`', async (name) => {
    const { url } = signed('GET', '/api/v1/users');
    const [path, query] = url.split('?') as [string, string];
    const params = new URLSearchParams(query);
    params.delete(name);
    expectUnauthenticated(await send('GET', `${path}?${params}`));
  });

  it('a lone signature parameter, even on a public route', async () => {
    expectUnauthenticated(await send('GET', '/api/v1/users?nonce=abc'));
    expectUnauthenticated(await send('GET', '/api/v1/users?signature=abc'));
    expectUnauthenticated(await send('GET', `/api/v1/users?timestamp=${clock.now()}`));
  });

  it.each(['2026-11-22T10%3A00%3A00Z', '1.7e12', '-1', ''])(
    'a timestamp that is not unix milliseconds (%p), even when correctly signed',
    async (timestamp) => {
      const unsigned = `/api/v1/users?timestamp=${timestamp}&nonce=bad-timestamp`;
      expectUnauthenticated(await send('GET', `${unsigned}&signature=${sign(app.config.secrets.signing, 'GET', unsigned)}`));
    },
  );

  it('a stale timestamp, more than 5 minutes off in either direction; exactly 5 minutes is accepted', async () => {
    expectUnauthenticated(await send('GET', signed('GET', '/api/v1/users', undefined, { timestamp: clock.now() - WINDOW - 1 }).url));
    expectUnauthenticated(await send('GET', signed('GET', '/api/v1/users', undefined, { timestamp: clock.now() + WINDOW + 1 }).url));
    expect((await send('GET', signed('GET', '/api/v1/users', undefined, { timestamp: clock.now() - WINDOW }).url)).statusCode).toBe(200);
    expect((await send('GET', signed('GET', '/api/v1/users', undefined, { timestamp: clock.now() + WINDOW }).url)).statusCode).toBe(200);
  });

  it('a request that was valid when signed but arrives after the window (time moved on)', async () => {
    const { url } = signed('GET', '/api/v1/users');
    clock.advance(WINDOW + 1);
    expectUnauthenticated(await send('GET', url));
  });

  it('a stale request does not burn its nonce', async () => {
    const nonce = 'stale-then-fresh';
    expectUnauthenticated(await send('GET', signed('GET', '/api/v1/users', undefined, { nonce, timestamp: clock.now() - WINDOW - 1 }).url));
    expect((await send('GET', signed('GET', '/api/v1/users', undefined, { nonce }).url)).statusCode).toBe(200);
  });
});

describe('nonces', () => {
  it('a replayed nonce is refused; its first use succeeds', async () => {
    const { url, nonce } = signed('GET', '/api/v1/users');
    expect((await send('GET', url)).statusCode).toBe(200);
    expectUnauthenticated(await send('GET', url));
    clock.advance(MINUTE);
    expectUnauthenticated(await send('GET', signed('GET', '/api/v1/users?page=1', undefined, { nonce }).url));
  });

  it('a failed attempt does not burn the nonce: after a bad signature, the same nonce with a good signature works', async () => {
    const { url, unsigned, nonce } = signed('GET', '/api/v1/users');
    expectUnauthenticated(await send('GET', `${unsigned}&signature=${'0'.repeat(64)}`));
    expect((await send('GET', url)).statusCode).toBe(200);
    expectUnauthenticated(await send('GET', signed('GET', '/api/v1/users', undefined, { nonce }).url));
  });

  it('a nonce is refused for as long as its request could still be accepted', async () => {
    const { url } = signed('GET', '/api/v1/users', undefined, { timestamp: clock.now() + WINDOW });
    expect((await send('GET', url)).statusCode).toBe(200);
    clock.advance(WINDOW);
    expectUnauthenticated(await send('GET', url));
    clock.advance(WINDOW);
    expectUnauthenticated(await send('GET', url));
  });
});
