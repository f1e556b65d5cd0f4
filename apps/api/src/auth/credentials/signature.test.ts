// Signed requests (SPEC §3): the canonical string, written out by hand and HMAC'd here with node:crypto, and every refusal.
import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { AppError, ErrorKinds } from '../../errors/app-error.js';
import { MemoryNonceStore } from '../../shared-state/nonces/memory.js';
import { SIGNATURE_WINDOW_MS, canonicalString, isSignedRequest, sign, verifySignedRequest, type SignableRequest } from './signature.js';

const SECRET = 'test-signing-secret-of-at-least-32-chars';
const NOW = 1_700_000_000_000;
const MINUTE = 60_000;
/** SHA-256 of the empty string: the body hash of a request without a body. */
const EMPTY_BODY = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

const sha256hex = (body: string | Buffer): string => createHash('sha256').update(body).digest('hex');
const hmac = (canonical: string, secret = SECRET): string => createHmac('sha256', secret).update(canonical).digest('hex');

/**
 * A request signed the way SPEC §3 tells a client to, without this module: the query (plain ASCII tokens, which
 * encodeURIComponent leaves as they are) sorted by key, `signature` appended last.
 */
function signedRequest(
  options: {
    method?: string;
    path?: string;
    params?: Record<string, string>;
    body?: string;
    timestamp?: number;
    nonce?: string;
    secret?: string;
  } = {},
): SignableRequest {
  const { method = 'GET', path = '/api/v1/users', params = {}, body, timestamp = NOW, nonce = 'nonce-1', secret = SECRET } = options;
  const query = Object.entries({ ...params, nonce, timestamp: String(timestamp) })
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
  const signature = hmac([method, path, query, sha256hex(body ?? '')].join('\n'), secret);
  return { method, url: `${path}?${query}&signature=${signature}`, rawBody: body };
}

/** Verifies against a fresh nonce store unless one is given; resolves to the AppError it was refused with, or undefined. */
async function outcome(request: SignableRequest, nowMs = NOW, nonces = new MemoryNonceStore()): Promise<AppError | undefined> {
  try {
    await verifySignedRequest(request, { secret: SECRET, nowMs, nonces });
    return undefined;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
}

const rejected = (reason: string) => ({ kind: ErrorKinds.UNAUTHENTICATED, status: 401, message: `Invalid signed request: ${reason}` });

describe('canonicalString', () => {
  it('is METHOD, PATH, sorted QUERY without `signature`, and the body hash, one a line', () => {
    expect(canonicalString('get', '/api/v1/users?timestamp=1700000000000&signature=abc&role=USER&nonce=n-1', undefined)).toBe(
      `GET\n/api/v1/users\nnonce=n-1&role=USER&timestamp=1700000000000\n${EMPTY_BODY}`,
    );
  });

  it('re-encodes each decoded key and value with encodeURIComponent, sorting by key then value', () => {
    const url = '/api/v1/posts?q=caf%C3%A9+au+lait&tag=a&tag=%2B&~x=(ok)!*&%C3%A9=1';
    expect(canonicalString('GET', url, undefined)).toBe(
      `GET\n/api/v1/posts\n%C3%A9=1&q=caf%C3%A9%20au%20lait&tag=%2B&tag=a&~x=(ok)!*\n${EMPTY_BODY}`,
    );
  });

  it('gives one string for the spellings of one query: order, `+` or `%20`, escape case', () => {
    const canonical = canonicalString('GET', '/p?b=x%20y&a=%c3%a9', undefined);
    expect(canonicalString('GET', '/p?a=%C3%A9&b=x+y', undefined)).toBe(canonical);
    expect(canonicalString('GET', '/p?a=é&b=x y', undefined)).toBe(canonical);
  });

  it('keeps the path as sent (prefix and escapes), takes the first `?` as the query start, and an empty query line', () => {
    expect(canonicalString('DELETE', '/api/v1/users/%37', undefined)).toBe(`DELETE\n/api/v1/users/%37\n\n${EMPTY_BODY}`);
    expect(canonicalString('GET', '/p?a=1?2', undefined)).toBe(`GET\n/p\na=1%3F2\n${EMPTY_BODY}`);
    expect(canonicalString('GET', '/p?', undefined)).toBe(`GET\n/p\n\n${EMPTY_BODY}`);
  });

  it('hashes the raw body bytes, the same given as a string or a Buffer; no body hashes as the empty string', () => {
    const body = '{"name":"Zoë","email":"zoe@example.com"}';
    const expected = `POST\n/api/v1/users\n\n${sha256hex(Buffer.from(body, 'utf8'))}`;
    expect(canonicalString('POST', '/api/v1/users', body)).toBe(expected);
    expect(canonicalString('POST', '/api/v1/users', Buffer.from(body))).toBe(expected);
    expect(canonicalString('POST', '/api/v1/users', '')).toBe(canonicalString('POST', '/api/v1/users', undefined));
  });

  it('sign is the lower-case hex HMAC-SHA256 of that string under the secret', () => {
    const body = '{"name":"Ada"}';
    const signature = sign(SECRET, 'post', '/api/v1/users?timestamp=1&nonce=n', body);
    expect(signature).toBe(hmac(`POST\n/api/v1/users\nnonce=n&timestamp=1\n${sha256hex(body)}`));
    expect(signature).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('isSignedRequest', () => {
  it.each([
    ['/api/v1/users?timestamp=1', true],
    ['/api/v1/users?nonce=n', true],
    ['/api/v1/users?page=2&signature=abc', true],
    ['/api/v1/users?signature=', true],
    ['/api/v1/users', false],
    ['/api/v1/users?api_key=key&page=2', false],
    ['/signature/timestamp?nonce_=1', false],
  ])('%s → %p', (url, expected) => {
    expect(isSignedRequest(url)).toBe(expected);
  });
});

describe('verifySignedRequest', () => {
  it('accepts a request signed as SPEC §3 says: with a body and a query or neither, its method in any case', async () => {
    expect(await outcome(signedRequest({ method: 'POST', params: { dryRun: 'true' }, body: '{"name":"Ada"}' }))).toBeUndefined();
    expect(await outcome(signedRequest())).toBeUndefined();
    const request = signedRequest({ method: 'PATCH', body: '{}' });
    expect(await outcome({ ...request, method: 'patch' })).toBeUndefined();
  });

  it('attack: a replayed request is refused: its nonce was spent', async () => {
    const nonces = new MemoryNonceStore();
    const request = signedRequest();
    expect(await outcome(request, NOW, nonces)).toBeUndefined();
    expect(await outcome(request, NOW + 1, nonces)).toMatchObject(rejected('nonce already used'));
    expect(await outcome(signedRequest({ timestamp: NOW + 2 * MINUTE }), NOW + 2 * MINUTE, nonces)).toMatchObject(rejected('nonce already used'));
  });

  it('attack: a request stamped at the window’s far edge cannot be replayed at its other edge', async () => {
    const nonces = new MemoryNonceStore();
    const request = signedRequest({ timestamp: NOW + SIGNATURE_WINDOW_MS });
    expect(await outcome(request, NOW, nonces)).toBeUndefined();
    expect(await outcome(request, NOW + 2 * SIGNATURE_WINDOW_MS, nonces)).toMatchObject(rejected('nonce already used'));
    expect(await outcome(request, NOW + 2 * SIGNATURE_WINDOW_MS + 1, nonces)).toMatchObject(rejected('timestamp outside the 5-minute window'));
  });

  it('accepts a timestamp up to exactly 5 minutes off either way, and refuses one a millisecond beyond', async () => {
    expect(SIGNATURE_WINDOW_MS).toBe(5 * MINUTE);
    expect(await outcome(signedRequest({ timestamp: NOW - 5 * MINUTE }))).toBeUndefined();
    expect(await outcome(signedRequest({ timestamp: NOW + 5 * MINUTE }))).toBeUndefined();
    expect(await outcome(signedRequest({ timestamp: NOW - 5 * MINUTE - 1 }))).toMatchObject(rejected('timestamp outside the 5-minute window'));
    expect(await outcome(signedRequest({ timestamp: NOW + 5 * MINUTE + 1 }))).toMatchObject(rejected('timestamp outside the 5-minute window'));
  });

  it.each([
    ['no parameters', '/api/v1/users'],
    ['no signature', '/api/v1/users?timestamp=1700000000000&nonce=n'],
    ['no nonce', '/api/v1/users?timestamp=1700000000000&signature=00'],
    ['no timestamp', '/api/v1/users?nonce=n&signature=00'],
    ['an empty nonce', '/api/v1/users?timestamp=1700000000000&nonce=&signature=00'],
  ])('refuses a request with %s', async (_what, url) => {
    expect(await outcome({ method: 'GET', url, rawBody: undefined })).toMatchObject(rejected('timestamp, nonce and signature are all required'));
  });

  it.each(['1700000000.000', '-1700000000000', '1.7e12', '2023-11-14T22:13:20Z', '0x18BCFE56800', '12345678901234567', ' 1700000000000'])(
    'refuses the timestamp %p: not unix milliseconds',
    async (timestamp) => {
      const url = `/api/v1/users?timestamp=${encodeURIComponent(timestamp)}&nonce=n&signature=00`;
      expect(await outcome({ method: 'GET', url, rawBody: undefined })).toMatchObject(rejected('timestamp must be unix milliseconds'));
    },
  );

  it.each<[string, (request: SignableRequest) => SignableRequest]>([
    ['another body', (request) => ({ ...request, rawBody: '{"name":"Mallory","role":"ADMIN"}' })],
    ['a body dropped', (request) => ({ ...request, rawBody: undefined })],
    ['another method', (request) => ({ ...request, method: 'DELETE' })],
    ['another path', (request) => ({ ...request, url: request.url.replace('/api/v1/users', '/api/v1/users/1') })],
    ['a parameter added', (request) => ({ ...request, url: `${request.url}&role=ADMIN` })],
    ['a parameter changed', (request) => ({ ...request, url: request.url.replace('dryRun=true', 'dryRun=false') })],
    ['a parameter removed', (request) => ({ ...request, url: request.url.replace('dryRun=true&', '') })],
    ['a truncated signature', (request) => ({ ...request, url: request.url.slice(0, -1) })],
    [
      'a signature of another request',
      (request) => ({ ...request, url: request.url.replace(/signature=\w+/, `signature=${sign(SECRET, 'GET', '/')}`) }),
    ],
  ])('attack: a signed request with %s is refused', async (_what, change) => {
    const original = signedRequest({ method: 'POST', params: { dryRun: 'true' }, body: '{"name":"Ada"}' });
    expect(await outcome(original)).toBeUndefined();
    expect(await outcome(change(original))).toMatchObject(rejected('signature does not match'));
  });

  it('attack: a request signed with another secret is refused', async () => {
    expect(await outcome(signedRequest({ secret: 'a-guessed-secret' }))).toMatchObject(rejected('signature does not match'));
  });

  it('spends the nonce only when everything else holds', async () => {
    const nonces = new MemoryNonceStore();
    const genuine = signedRequest({ nonce: 'shared' });
    const forged = { ...genuine, url: genuine.url.replace(/signature=\w+/, `signature=${'0'.repeat(64)}`) };
    expect(await outcome(forged, NOW, nonces)).toMatchObject(rejected('signature does not match'));
    expect(await outcome(genuine, NOW + 6 * MINUTE, nonces)).toMatchObject(rejected('timestamp outside the 5-minute window'));
    expect(await outcome(genuine, NOW, nonces)).toBeUndefined();
  });
});
