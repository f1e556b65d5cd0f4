// POST /auth/password, /auth/password/forgot, /auth/password/reset, /auth/email/verify, /auth/email/verify/resend:
// the account lifecycle of SPEC §3.2 (auth/account-lifecycle.ts), over REST.
import type { OperationHandlers } from '@users-posts/contracts';
import { setSessionCookie, tokenLogin } from '../../auth/login.js';
import { requireUser } from '../../auth/principal.js';
import { AppError } from '../../errors/app-error.js';
import { clientAddress } from '../../http/client-address.js';
import type { RestContext } from '../context.js';
import { KNOWN_LOGIN_TTL_MS, knownLoginKeyOf, loginAccountBucket } from '../../rate-limits/buckets.js';

const ACCEPTED = { success: true } as const;

export const accountHandlers = {
  changePassword: async ({ body }, { request, reply }) => {
    const caller = requireUser(request.principal);
    if (!caller.signInId) {
      throw new AppError('FORBIDDEN', 'Changing the password needs a sign-in (a Bearer access token or the sid cookie), not an API key');
    }
    const { account, config } = request.server;
    const renewed = await account.changePassword({ userId: caller.userId, signInId: caller.signInId }, body.currentPassword, body.newPassword, {
      // A wrong current password is a failed login of the account (SPEC §3.2): the same per-account bucket as POST /login.
      onWrongPassword: (email) => request.server.consumeRateLimit(loginAccountBucket(config.rateLimits), { key: email }),
    });
    if (renewed.kind === 'cookie') {
      setSessionCookie(reply, renewed.secret);
      return { status: 200, body: { success: true, login: 'session' } };
    }
    return { status: 200, body: tokenLogin(renewed.pair) };
  },

  forgotPassword: async ({ body }, { request }) => {
    // Awaited: its message is admitted before the answer, charged to the asking address (503 when it cannot be).
    await request.server.account.forgotPassword(body.email, clientAddress(request));
    return { status: 202, body: ACCEPTED };
  },

  resetPassword: async ({ body }, { request }) => {
    const { email } = await request.server.account.resetPassword(body.token, body.newPassword);
    // Whoever followed the mailed link controls the address: from where they did, the account is theirs to log in to,
    // even while the per-account login guard refuses new addresses (SPEC §3.3: the owner's way back in).
    await request.server.identity.stores.knownLogins.remember(knownLoginKeyOf(email, request), KNOWN_LOGIN_TTL_MS);
    return { status: 204, body: undefined };
  },

  verifyEmail: async ({ body }, { request }) => {
    await request.server.account.verifyEmail(body.token);
    return { status: 204, body: undefined };
  },

  resendVerification: async (_input, { request }) => {
    const caller = requireUser(request.principal);
    await request.server.account.resendVerification(caller.userId);
    return { status: 202, body: ACCEPTED };
  },
} satisfies OperationHandlers<RestContext>;
