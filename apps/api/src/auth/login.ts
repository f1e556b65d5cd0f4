// The one way a login completes (password or OAuth): a token pair, or a server-side session with the sid cookie.
import type { FastifyReply } from 'fastify';
import { ACCESS_TTL_SECONDS } from './credentials/jwt.js';
import type { Identity } from './identity.js';
import { SESSION_COOKIE, SESSION_TTL_SECONDS } from './credentials/sessions.js';

/** `login` tells the two apart: the contract's discriminator between LoginTokens and LoginSession. */
export type LoginBody =
  | { success: true; login: 'tokens'; accessToken: string; refreshToken: string; tokenType: 'Bearer'; expiresIn: number }
  | { success: true; login: 'session' };

/** Cookie attributes of SPEC §3 (`Secure` always: browsers treat localhost as a secure context). */
export const SESSION_COOKIE_OPTIONS = { httpOnly: true, secure: true, sameSite: 'lax', path: '/' } as const;

export async function completeLogin(
  identity: Identity,
  reply: FastifyReply,
  user: { id: number; tokenVersion: number },
  options: { session: boolean },
): Promise<LoginBody> {
  if (options.session) {
    const secret = await identity.sessions.create(user.id);
    reply.setCookie(SESSION_COOKIE, secret, { ...SESSION_COOKIE_OPTIONS, maxAge: SESSION_TTL_SECONDS });
    return { success: true, login: 'session' };
  }
  const pair = await identity.refreshTokens.issue(user.id, user.tokenVersion);
  return { success: true, login: 'tokens', ...pair, tokenType: 'Bearer', expiresIn: ACCESS_TTL_SECONDS };
}

export function clearSessionCookie(reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, SESSION_COOKIE_OPTIONS);
}
