// GET /auth/oauth/{provider}/authorize and /callback: OpenID Connect login (authorization code + PKCE), finished like POST /login.
import type { OperationHandlers } from '@users-posts/contracts';
import { safeEqual } from '../../auth/hashing.js';
import { completeLogin } from '../../auth/login.js';
import { linkOrCreateUser } from '../../auth/oauth-accounts.js';
import { authorizationRequest, exchangeCode } from '../../auth/oauth-flow.js';
import { oauthProvider } from '../../auth/oauth-providers.js';
import { clearTransaction, readTransaction, saveTransaction } from '../../auth/oauth-transaction.js';
import { AppError } from '../../errors.js';
import type { RestContext } from '../context.js';

// Neither the redirect (it sets the transaction cookie) nor the tokens may be stored by a cache.
const NO_STORE = { 'cache-control': 'no-store' };

export const oauthHandlers = {
  oauthAuthorize: async ({ params, query }, { request, reply }) => {
    const { config, identity } = request.server;
    const provider = oauthProvider(config.oauthProviders, params.provider);
    const { url, transaction } = await authorizationRequest(provider, { session: query.session === true, now: identity.clock.now() });
    saveTransaction(reply, provider.config.redirectUri, transaction);
    return { status: 302, body: undefined, headers: { ...NO_STORE, location: url.href } };
  },

  oauthCallback: async ({ params, query }, { request, reply }) => {
    const { config, identity, db } = request.server;
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
    const user = await linkOrCreateUser(db.prisma, provider.config.name, profile);
    const body = await completeLogin(identity, reply, user, { session: transaction.session });
    return { status: 200, body, headers: NO_STORE };
  },
} satisfies OperationHandlers<RestContext>;
