// /api/v1/api-keys: create (the key shown once), list and revoke the caller's API keys.
import type { components, OperationHandlers } from '@users-posts/contracts';
import type { ApiKey } from '@users-posts/db';
import { requireRecentLogin, requireUser } from '../../auth/principal.js';
import type { RestContext } from '../context.js';
import { ok } from '../envelope.js';

const apiKeyResource = (key: ApiKey): components['schemas']['ApiKey'] => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix,
  createdAt: key.createdAt.toISOString(),
});

export const apiKeysHandlers = {
  createApiKey: async ({ body }, { request }) => {
    const caller = requireUser(request.principal);
    requireRecentLogin(caller); // a key outlives its maker's sign-in: only a fresh login mints one (SPEC §3.2)
    const { record, key } = await request.server.identity.apiKeys.create(caller.userId, body.name);
    return {
      status: 201,
      headers: { location: `/api/v1/api-keys/${record.id}` },
      body: ok({ ...apiKeyResource(record), key }),
    };
  },

  listApiKeys: async (_input, { request }) => {
    const caller = requireUser(request.principal);
    const keys = await request.server.identity.apiKeys.list(caller.userId);
    return { status: 200, body: ok({ items: keys.map(apiKeyResource), total: keys.length }) };
  },

  deleteApiKey: async ({ params }, { request }) => {
    const caller = requireUser(request.principal);
    await request.server.identity.apiKeys.delete(params.id, { userId: caller.userId, admin: caller.role === 'ADMIN' });
    return { status: 204, body: undefined };
  },
} satisfies OperationHandlers<RestContext>;
