// POST /login, /auth/refresh, /logout: password login, refresh-token rotation, and revocation.
import type { OperationHandlers } from '@users-posts/contracts';
import { clearSessionCookie, completeLogin } from '../../auth/login.js';
import { ACCESS_TTL_SECONDS } from '../../auth/credentials/jwt.js';
import { requireUser } from '../../auth/principal.js';
import type { RestContext } from '../context.js';

const LOGIN_FAILED = 'Invalid email or password';

export const authHandlers = {
  login: async ({ body }, { request, reply }) => {
    const user = await request.server.identity.passwords.verify(body.email, body.password);
    if (!user) return { status: 401, body: { success: false, error: LOGIN_FAILED } };
    const result = await completeLogin(request.server.identity, reply, user, { session: body.session === true });
    return { status: 200, body: result };
  },

  refreshTokens: async ({ body }, { request }) => {
    const pair = await request.server.identity.refreshTokens.rotate(body.refreshToken);
    return { status: 200, body: { ...pair, tokenType: 'Bearer', expiresIn: ACCESS_TTL_SECONDS } };
  },

  logout: async ({ query, body }, { request, reply }) => {
    const caller = requireUser(request.principal);
    const { identity } = request.server;
    if (caller.token) await identity.stores.revocations.revoke(caller.token.jti, caller.token.exp * 1000);
    if (body?.refreshToken) await identity.refreshTokens.revokeFamilyOf(body.refreshToken, caller.userId);
    if (caller.sessionId) await identity.sessions.destroy(caller.sessionId);
    if (query.all) {
      await identity.refreshTokens.revokeUser(caller.userId);
      await identity.sessions.destroyAllOf(caller.userId);
    }
    identity.revoked(caller.userId); // open WebSockets of this user re-verify now
    clearSessionCookie(reply);
    return { status: 204, body: undefined };
  },
} satisfies OperationHandlers<RestContext>;
