// The pending OAuth login (state, nonce, PKCE verifier, session mode) between authorize and callback: a signed cookie.
//
// Why a cookie and not a server-side row or memory: the callback may reach any instance behind the load balancer, and
// a cookie needs no shared store, no clean-up of abandoned logins and no database write before the user has logged in.
// Why it is safe: it is signed with SESSION_SECRET (HMAC, @fastify/cookie), so nobody can forge or edit it; HttpOnly, so
// page scripts cannot read it; Secure; SameSite=Lax, which still sends it on the provider's top-level redirect back;
// scoped to the callback path; and it expires after 10 minutes (in the signed payload too, not only Max-Age). It binds
// the login to this browser: a callback URL replayed elsewhere lacks the cookie, and the code alone cannot be redeemed
// without the verifier. It is cleared by the callback whatever the outcome, so each transaction is used once.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors/app-error.js';

export const OAUTH_TRANSACTION_COOKIE = 'oauth_tx';
export const OAUTH_TRANSACTION_TTL_SECONDS = 10 * 60;

export interface OAuthTransaction {
  provider: string;
  state: string;
  nonce: string;
  codeVerifier: string;
  /** The authorize request carried `?session=true`: finish with the sid cookie instead of a token pair. */
  session: boolean;
  /**
   * `?link=true`: the signed-in user who asked to link this provider, and the sign-in they asked from; the callback links
   * to that user only, and only while that sign-in lives on at the same token version with a recent login (links.ts).
   */
  link?: LinkBinding;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/**
 * What a link flow is bound to, sealed in the signed OAuth transaction: the user who asked, the sign-in they asked from,
 * and the user's token version then. The callback links only while that sign-in lives on at that version, so that a
 * logout, an ended sign-in or any security event between the two steps kills the pending link with everything else.
 */
export interface LinkBinding {
  userId: number;
  signInId: string;
  tokenVersion: number;
}

/** Only the path of the redirect URI receives the cookie (the browser sees that path, even behind a proxy prefix). */
const cookieOptions = (redirectUri: string) => ({ httpOnly: true, secure: true, sameSite: 'lax', path: new URL(redirectUri).pathname }) as const;

export function saveTransaction(reply: FastifyReply, redirectUri: string, transaction: OAuthTransaction): void {
  const value = Buffer.from(JSON.stringify(transaction)).toString('base64url');
  reply.setCookie(OAUTH_TRANSACTION_COOKIE, value, { ...cookieOptions(redirectUri), signed: true, maxAge: OAUTH_TRANSACTION_TTL_SECONDS });
}

export function clearTransaction(reply: FastifyReply, redirectUri: string): void {
  reply.clearCookie(OAUTH_TRANSACTION_COOKIE, cookieOptions(redirectUri));
}

function isTransaction(value: unknown): value is OAuthTransaction {
  const t = value as Partial<OAuthTransaction> | null;
  return (
    typeof t === 'object' &&
    t !== null &&
    typeof t.provider === 'string' &&
    typeof t.state === 'string' &&
    typeof t.nonce === 'string' &&
    typeof t.codeVerifier === 'string' &&
    typeof t.session === 'boolean' &&
    typeof t.expiresAt === 'number' &&
    (t.link === undefined || isLinkBinding(t.link))
  );
}

function isLinkBinding(value: unknown): value is LinkBinding {
  const link = value as Partial<LinkBinding> | null;
  return (
    typeof link === 'object' &&
    link !== null &&
    Number.isSafeInteger(link.userId) &&
    typeof link.signInId === 'string' &&
    Number.isSafeInteger(link.tokenVersion)
  );
}

/** The transaction this browser started with `provider`, or 401: without it the `state` cannot be checked. */
export function readTransaction(request: FastifyRequest, provider: string, now: number): OAuthTransaction {
  const raw = request.cookies[OAUTH_TRANSACTION_COOKIE];
  if (!raw) throw new AppError('UNAUTHENTICATED', 'No OAuth login in progress: the state cannot be verified');
  const unsigned = request.unsignCookie(raw);
  let transaction: unknown;
  try {
    transaction = unsigned.valid && unsigned.value ? JSON.parse(Buffer.from(unsigned.value, 'base64url').toString()) : undefined;
  } catch {
    transaction = undefined;
  }
  if (!isTransaction(transaction) || transaction.provider !== provider) {
    throw new AppError('UNAUTHENTICATED', 'Invalid OAuth login state');
  }
  if (transaction.expiresAt <= now) throw new AppError('UNAUTHENTICATED', 'The OAuth login took too long; start again');
  return transaction;
}
