// The one way a login completes (password or OAuth): a sign-in (credentials/sign-ins.ts) holding on by a token pair, or
// by the sid cookie.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';
import { ACCESS_TTL_SECONDS } from './credentials/jwt.js';
import type { Identity } from './identity.js';
import { SESSION_COOKIE, SESSION_TTL_SECONDS } from './credentials/sign-ins.js';

/** `login` tells the two apart: the contract's discriminator between LoginTokens and LoginSession. */
export type LoginBody =
  | { success: true; login: 'tokens'; accessToken: string; refreshToken: string; tokenType: 'Bearer'; expiresIn: number }
  | { success: true; login: 'session' };

/** Cookie attributes of SPEC §3 (`Secure` always: browsers treat localhost as a secure context). */
export const SESSION_COOKIE_OPTIONS = { httpOnly: true, secure: true, sameSite: 'lax', path: '/' } as const;

/**
 * Starts a sign-in for `user`, verified at its `tokenVersion`. A security event committed since that check (a password
 * reset racing this login) leaves nothing to start: 401, as for the wrong password.
 */
export async function completeLogin(
  identity: Identity,
  request: FastifyRequest,
  reply: FastifyReply,
  user: { id: number; tokenVersion: number },
  options: { session: boolean },
): Promise<LoginBody> {
  const signIn = await identity.signIns.start(user, options.session ? 'cookie' : 'tokens', request.headers['user-agent']);
  if (!signIn) throw new AppError('UNAUTHENTICATED', 'The credentials changed during this login; log in again');
  if (signIn.secret !== undefined) {
    setSessionCookie(reply, signIn.secret);
    return { success: true, login: 'session' };
  }
  return tokenLogin(await identity.refreshTokens.issue(user, signIn));
}

/** The body of a token login (POST /login, a refresh, a password change). */
export const tokenLogin = (pair: { accessToken: string; refreshToken: string }): LoginBody => ({
  success: true,
  login: 'tokens',
  ...pair,
  tokenType: 'Bearer',
  expiresIn: ACCESS_TTL_SECONDS,
});

export function setSessionCookie(reply: FastifyReply, secret: string): void {
  reply.setCookie(SESSION_COOKIE, secret, { ...SESSION_COOKIE_OPTIONS, maxAge: SESSION_TTL_SECONDS });
}

export function clearSessionCookie(reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, SESSION_COOKIE_OPTIONS);
}
