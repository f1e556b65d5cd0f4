// GET /auth/oauth/{provider}/authorize and /callback: OpenID Connect login (authorization code + PKCE), finished like POST /login.
import type { OperationHandlers } from '@users-posts/contracts';
import type { FastifyRequest } from 'fastify';
import { safeEqual } from '../../auth/hashing.js';
import { completeLogin } from '../../auth/login.js';
import type { SignUpRules } from '../../auth/oauth/accounts.js';
import { authorizationRequest, exchangeCode } from '../../auth/oauth/flow.js';
import type { LinkBinding } from '../../auth/oauth/transaction.js';
import { oauthProvider } from '../../auth/oauth/providers.js';
import { requireRecentLogin, requireUser, type Principal } from '../../auth/principal.js';
import { clearTransaction, readTransaction, saveTransaction } from '../../auth/oauth/transaction.js';
import { AppError } from '../../errors/app-error.js';
import { validateInput } from '../../services/validation.js';
import type { RestContext } from '../context.js';
import { consumeSignup } from '../../rate-limits/buckets.js';

// Neither the redirect (it sets the transaction cookie) nor the tokens may be stored by a cache.
const NO_STORE = { 'cache-control': 'no-store' };

/**
 * The user asking to link, and the sign-in the link is bound to: signed in by session cookie or Bearer token. Not by an
 * API key: a link is a lasting login (it outlives the key), so a leaked key must not be able to attach someone else's
 * provider login. And with a recent login (403 40301 otherwise), as for minting an API key: a token held for a moment
 * by a thief must not buy a way in of their own. The callback checks the binding and the recency again (links.ts).
 */
function linkingUser(principal: Principal, request: FastifyRequest): Promise<LinkBinding> {
  const caller = requireUser(principal);
  if ((caller.via !== 'session' && caller.via !== 'bearer') || caller.signInId === undefined) {
    throw new AppError('FORBIDDEN', 'Linking a login needs a session cookie or a Bearer access token');
  }
  // A top-level navigation from another site carries the session cookie (SameSite=Lax): a foreign page must not be
  // able to start a link in the victim's browser (with a login CSRF at the provider, it would attach the attacker's).
  if (caller.via === 'session' && request.headers['sec-fetch-site'] === 'cross-site') {
    throw new AppError('FORBIDDEN', 'Start linking from this site: a link started by another site is refused');
  }
  requireRecentLogin(caller);
  return request.server.identity.oauthLinks.bind(caller.userId, caller.signInId);
}

/**
 * A first login's new account meets the rules of every sign-up (SPEC §0.1): the contract's CreateUserInput, compiled
 * once for both doors (services/validation.ts), and one account of the client address's sign-up bucket (SPEC §4).
 */
function signUpRules(request: FastifyRequest): SignUpRules {
  const { server } = request;
  return {
    validate: (input) => validateInput('CreateUserInput', input),
    admit: () => consumeSignup(server, request),
  };
}

export const oauthHandlers = {
  oauthAuthorize: async ({ params, query }, { request, reply }) => {
    const { config, identity } = request.server;
    // `?link=true`: only a signed-in user may ask, and the identity will be linked to that user alone.
    const link = query.link === true ? await linkingUser(request.principal, request) : undefined;
    const provider = oauthProvider(config.oauthProviders, params.provider);
    const { url, transaction } = await authorizationRequest(provider, { session: query.session === true, now: identity.clock.now(), link });
    saveTransaction(reply, provider.config.redirectUri, transaction);
    return { status: 302, body: undefined, headers: { ...NO_STORE, location: url.href } };
  },

  oauthCallback: async ({ params, query }, { request, reply }) => {
    const { config, identity } = request.server;
    const provider = oauthProvider(config.oauthProviders, params.provider);
    // One use per transaction, whatever the outcome: a failed or replayed callback has to start over.
    clearTransaction(reply, provider.config.redirectUri);
    if (query.error) throw new AppError('BAD_REQUEST', `The identity provider reported ${query.error}`);
    const transaction = readTransaction(request, provider.config.name, identity.clock.now());
    if (!safeEqual(query.state, transaction.state)) throw new AppError('UNAUTHENTICATED', 'OAuth state mismatch');
    if (!query.code) throw new AppError('BAD_REQUEST', 'The callback carries no authorization code');

    const queryStart = request.url.indexOf('?');
    const rawQuery = queryStart < 0 ? '' : request.url.slice(queryStart + 1);
    const profile = await exchangeCode(provider, rawQuery, transaction);
    const user = await identity.userFromOAuth(provider.config.name, profile, { link: transaction.link, signUp: signUpRules(request) });
    const body = await completeLogin(identity, request, reply, user, { session: transaction.session });
    return { status: 200, body, headers: NO_STORE };
  },
} satisfies OperationHandlers<RestContext>;
