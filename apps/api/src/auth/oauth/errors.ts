// Maps openid-client failures onto the AppError table: the issuer unreachable → 503, a rejected login → 400/401.
import { AuthorizationResponseError, ClientError, ResponseBodyError, WWWAuthenticateChallengeError } from 'openid-client';
import { AppError } from '../../errors/app-error.js';

/** The error and its causes (openid-client wraps errors it does not recognise, e.g. from another realm). */
function chain(error: unknown): unknown[] {
  const errors: unknown[] = [];
  for (let current = error; current !== undefined && errors.length < 5; current = (current as { cause?: unknown }).cause) {
    errors.push(current);
    if (typeof current !== 'object' || current === null) break;
  }
  return errors;
}

/** Could not talk to the issuer at all: refused, reset, DNS, timeout, or it answered with a 5xx. */
function unreachable(error: unknown): boolean {
  return chain(error).some((link) => {
    // undici reports every connection-level failure as `TypeError: fetch failed` with the socket error as cause
    // (compared by name: under a VM sandbox such as jest's, it is another realm's TypeError).
    const { name, message } = (link ?? {}) as { name?: unknown; message?: unknown };
    if (name === 'TypeError' && message === 'fetch failed') return true;
    if (!(link instanceof ClientError)) return false;
    if (link.code === 'OAUTH_TIMEOUT' || link.code === 'OAUTH_ABORT') return true;
    // "unexpected HTTP status code" carries the issuer's Response as its cause.
    const status = (link.cause as { status?: unknown } | undefined)?.status;
    return link.code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' && typeof status === 'number' && status >= 500;
  });
}

/** Discovery failed: whatever the reason, the provider cannot be used right now. */
export function discoveryError(provider: string, error: unknown): AppError {
  if (error instanceof AppError) return error;
  return new AppError('UNAVAILABLE', `The identity provider ${provider} cannot be reached`);
}

/**
 * The code exchange (or the userinfo call after it) failed. A broken connection is the issuer's problem (503);
 * anything the issuer or the ID-token checks rejected (wrong PKCE verifier, used code, nonce, audience) is 401.
 * Returns undefined for errors that are not openid-client's (programming errors stay 500).
 */
export function exchangeError(provider: string, error: unknown): AppError | undefined {
  if (error instanceof AppError) return error;
  if (unreachable(error)) return new AppError('UNAVAILABLE', `The identity provider ${provider} cannot be reached`);
  if (error instanceof ResponseBodyError && error.status >= 500) {
    return new AppError('UNAVAILABLE', `The identity provider ${provider} failed (${error.error})`);
  }
  if (error instanceof AuthorizationResponseError) return new AppError('BAD_REQUEST', `The identity provider reported ${error.error}`);
  if (error instanceof ResponseBodyError) return new AppError('UNAUTHENTICATED', `The identity provider rejected the code exchange (${error.error})`);
  if (error instanceof WWWAuthenticateChallengeError) return new AppError('UNAUTHENTICATED', 'The identity provider rejected the client');
  if (error instanceof ClientError) {
    // The cause names the check that failed (e.g. 'unexpected JWT "nonce" (nonce) claim value'); no secret is in it.
    const cause = (error.cause as { message?: unknown } | undefined)?.message;
    const detail = typeof cause === 'string' ? cause : error.message;
    return new AppError('UNAUTHENTICATED', `OAuth login failed: ${detail}`);
  }
  return undefined;
}
