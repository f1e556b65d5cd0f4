// POST /login, /auth/login/trust-address, /auth/refresh, /logout: password login and the owner's way past its guard
// from a new address, refresh-token rotation, and ending sign-ins.
import type { OperationHandlers } from '@users-posts/contracts';
import { ACCESS_TTL_SECONDS } from '../../auth/credentials/jwt.js';
import { clearSessionCookie, completeLogin } from '../../auth/login.js';
import { requireUser } from '../../auth/principal.js';
import { AppError } from '../../errors/app-error.js';
import type { RestContext } from '../context.js';
import { KNOWN_LOGIN_TTL_MS, knownLoginKey, knownLoginKeyOf } from '../../rate-limits/buckets.js';

const LOGIN_FAILED = { success: false, error: 'Invalid email or password' } as const;

export const authHandlers = {
  login: async ({ body }, { request, reply }) => {
    const { identity } = request.server;
    // A credential header that did not verify (SPEC §3.3): counted like a wrong password by the address's buckets
    // (already, before this runs), answered like one, and no guess at the account's password.
    if (request.refusedCredential) return { status: 401, body: LOGIN_FAILED };
    const user = await identity.passwords.verify(body.email, body.password);
    if (!user) {
      request.passwordRefused = true;
      return { status: 401, body: LOGIN_FAILED };
    }
    try {
      const answer = await completeLogin(identity, request, reply, user, { session: body.session === true });
      // The owner logs in from here: the per-account guard never refuses this address for this account.
      await identity.stores.knownLogins.remember(knownLoginKey(request), KNOWN_LOGIN_TTL_MS);
      return { status: 200, body: answer };
    } catch (error) {
      // The password changed between its check and the sign-in (a reset racing this login): the password was wrong.
      if (error instanceof AppError && error.kind.status === 401) return { status: 401, body: LOGIN_FAILED };
      throw error;
    }
  },

  trustLoginAddress: async ({ body }, { request }) => {
    // Whoever opened the mailed link controls the account's address: from where they did, the per-account guard lets
    // the password be tried (SPEC §3.3); the password is still needed.
    const { email } = await request.server.addressTrust.follow(body.token);
    await request.server.identity.stores.knownLogins.remember(knownLoginKeyOf(email, request), KNOWN_LOGIN_TTL_MS);
    return { status: 204, body: undefined };
  },

  refreshTokens: async ({ body }, { request }) => {
    const pair = await request.server.identity.refreshTokens.rotate(body.refreshToken);
    return { status: 200, body: { ...pair, tokenType: 'Bearer', expiresIn: ACCESS_TTL_SECONDS } };
  },

  logout: async ({ query, body }, { request, reply }) => {
    const caller = requireUser(request.principal);
    const { identity } = request.server;
    if (caller.token) await identity.stores.revocations.revoke(caller.token.jti, caller.token.exp * 1000);
    // The caller's sign-in (its refresh tokens, its cookie, every access token issued under it) ends; so does the one
    // of a refresh token the client names, if it is the caller's.
    const signInOfToken = body?.refreshToken ? await identity.refreshTokens.signInOf(body.refreshToken, caller.userId) : null;
    for (const id of new Set([caller.signInId, signInOfToken])) if (id) await identity.signIns.end(id, caller.userId);
    // Everywhere: a security event (SPEC §3.2), every credential of the user, API keys included.
    if (query.all) await identity.securityEvents.revokeCredentials(caller.userId);
    else identity.revoked(caller.userId); // open WebSockets of this user re-verify now
    clearSessionCookie(reply);
    return { status: 204, body: undefined };
  },
} satisfies OperationHandlers<RestContext>;
