// Signed requests (SPEC §3): HMAC-SHA256 over METHOD, PATH, sorted QUERY and the body hash; 5-minute window, one-time nonce.
import { createHmac } from 'node:crypto';
import { AppError } from '../../errors/app-error.js';
import { safeEqual, sha256 } from '../hashing.js';
import type { NonceStore } from '../../shared-state/nonces/store.js';

export const SIGNATURE_WINDOW_MS = 5 * 60 * 1000;
const SIGNATURE_PARAMS = ['timestamp', 'nonce', 'signature'] as const;

export interface SignableRequest {
  method: string;
  /** The request target as sent: path plus query string. */
  url: string;
  rawBody: Buffer | string | undefined;
}

/** The canonical string both sides sign. */
export function canonicalString(method: string, url: string, rawBody: Buffer | string | undefined): string {
  const [path = '', query = ''] = url.split(/\?(.*)/s, 2);
  const pairs = [...new URLSearchParams(query)]
    .filter(([key]) => key !== 'signature')
    .map(([key, value]) => [encodeURIComponent(key), encodeURIComponent(value)] as const)
    .sort(([ka, va], [kb, vb]) => (ka < kb ? -1 : ka > kb ? 1 : va < vb ? -1 : va > vb ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
  return [method.toUpperCase(), path, pairs, sha256(rawBody ?? '')].join('\n');
}

export function sign(secret: string, method: string, url: string, rawBody?: Buffer | string): string {
  return createHmac('sha256', secret)
    .update(canonicalString(method, url, rawBody))
    .digest('hex');
}

/** Whether the request carries any of the signature parameters (then it must be a valid signed request). */
export function isSignedRequest(url: string): boolean {
  const query = new URLSearchParams(url.split(/\?(.*)/s, 2)[1] ?? '');
  return SIGNATURE_PARAMS.some((name) => query.has(name));
}

const rejected = (message: string) => new AppError('UNAUTHENTICATED', `Invalid signed request: ${message}`);

/** Verifies a signed request, or throws 401 saying why. The nonce is spent only when everything else holds. */
export async function verifySignedRequest(request: SignableRequest, options: { secret: string; nowMs: number; nonces: NonceStore }): Promise<void> {
  const query = new URLSearchParams(request.url.split(/\?(.*)/s, 2)[1] ?? '');
  const [timestamp, nonce, signature] = SIGNATURE_PARAMS.map((name) => query.get(name));
  if (!timestamp || !nonce || !signature) throw rejected('timestamp, nonce and signature are all required');
  if (!/^\d{1,16}$/.test(timestamp)) throw rejected('timestamp must be unix milliseconds');
  if (Math.abs(options.nowMs - Number(timestamp)) > SIGNATURE_WINDOW_MS) throw rejected('timestamp outside the 5-minute window');
  const expected = sign(options.secret, request.method, request.url, request.rawBody);
  if (!safeEqual(signature.toLowerCase(), expected)) throw rejected('signature does not match');
  // A nonce lives as long as its timestamp could be accepted, on either side of now.
  if (!(await options.nonces.claim(nonce, 2 * SIGNATURE_WINDOW_MS + 1, options.nowMs))) throw rejected('nonce already used');
}
