// SHA-256 of stored secrets (refresh tokens, session ids, API keys): the database never holds a usable secret.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const sha256 = (value: string | Buffer): string => createHash('sha256').update(value).digest('hex');

/** A URL-safe random secret with `bytes` of entropy. */
export const randomSecret = (bytes = 32): string => randomBytes(bytes).toString('base64url');

/** Constant-time string comparison (false for different lengths). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
