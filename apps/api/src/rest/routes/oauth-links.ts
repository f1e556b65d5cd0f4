// /api/v1/oauth-links: the caller's linked OpenID logins (auth/oauth/links.ts), listed and removed one by one.
import type { components, OperationHandlers } from '@users-posts/contracts';
import type { OAuthLinkRecord } from '../../auth/oauth/links.js';
import { requireRecentLogin, requireUser } from '../../auth/principal.js';
import { notFound } from '../../errors/app-error.js';
import type { RestContext } from '../context.js';
import { ok } from '../envelope.js';

const DEFAULT_PAGE_SIZE = 20;

const oauthLinkResource = (link: OAuthLinkRecord): components['schemas']['OAuthLink'] => ({
  id: link.id,
  provider: link.provider,
  createdAt: link.createdAt.toISOString(),
});

export const oauthLinksHandlers = {
  listOAuthLinks: async ({ query }, { request }) => {
    const caller = requireUser(request.principal);
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
    const { items, total } = await request.server.identity.oauthLinks.list(caller.userId, { limit: pageSize, offset: (page - 1) * pageSize });
    return { status: 200, body: ok({ items: items.map(oauthLinkResource), total, page, pageSize }) };
  },

  deleteOAuthLink: async ({ params }, { request }) => {
    const caller = requireUser(request.principal);
    // Which provider logins reach an account is a sensitive change (SPEC §3.2): a fresh login only, never an API key.
    requireRecentLogin(caller);
    if (!(await request.server.identity.oauthLinks.remove(params.id, caller.userId))) throw notFound('OpenID link');
    return { status: 204, body: undefined };
  },
} satisfies OperationHandlers<RestContext>;
