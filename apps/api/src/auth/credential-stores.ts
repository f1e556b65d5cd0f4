// The credentials' tables as stores a client's requests grow (SPEC §0.2): each bounded per owner, declared once here.
import type { PrismaClient } from '@users-posts/db';
import type { FastifyInstance } from 'fastify';
import { ACCOUNT_TOKEN_TTL_MS } from './credentials/account-tokens.js';
import { MAX_API_KEYS_PER_USER } from './credentials/api-keys.js';
import { DEFAULT_OUTBOX_CONFIG } from '../mail/outbox.js';

/** The most rows one owner holds in `table`, grouped by `owner` (the store's size per owner). */
async function largestOwner(prisma: PrismaClient, table: string, owner: string): Promise<{ entries: number }> {
  // Identifiers from the fixed list below, never from a request.
  const rows = await prisma.$queryRawUnsafe<{ n: bigint | null }[]>(
    `SELECT max(n) AS n FROM (SELECT count(*) AS n FROM ${table} GROUP BY ${owner}) AS o`,
  );
  return { entries: Number(rows[0]?.n ?? 0) };
}

export function declareCredentialStores(app: FastifyInstance, prisma: PrismaClient): void {
  const bounds = app.config.storeBounds;
  app.stores.declare({
    name: 'sign-ins',
    home: 'database',
    scope: 'owner',
    maxEntries: bounds.signInsPerUser,
    perClient: 'a user holds at most SIGN_INS_MAX_PER_USER sign-ins (one per login, password or OpenID)',
    atBound: "a new login ends the user's oldest sign-in (and its expired ones)",
    config: ['SIGN_INS_MAX_PER_USER'],
    size: () => largestOwner(prisma, 'sessions', 'user_id'),
  });
  app.stores.declare({
    name: 'refresh-tokens',
    home: 'database',
    scope: 'owner',
    maxEntries: bounds.refreshTokensPerSignIn + 1,
    perClient: 'a sign-in keeps its unspent refresh token and its newest REFRESH_TOKENS_KEPT_PER_SIGN_IN spent ones (reuse detection)',
    atBound: 'each refresh forgets the oldest spent token beyond the bound (presented again, it is unknown: 401)',
    config: ['REFRESH_TOKENS_KEPT_PER_SIGN_IN'],
    size: () => largestOwner(prisma, 'refresh_tokens', 'family_id'),
  });
  app.stores.declare({
    name: 'api-keys',
    home: 'database',
    scope: 'owner',
    maxEntries: MAX_API_KEYS_PER_USER,
    perClient: `a user holds at most ${MAX_API_KEYS_PER_USER} API keys`,
    atBound: 'creating another is refused (409) until one is revoked',
    config: [],
    size: () => largestOwner(prisma, 'api_keys', 'user_id'),
  });
  const hour = 3_600_000;
  app.stores.declare({
    name: 'account-tokens',
    home: 'database',
    scope: 'owner',
    // One reset and one verification token (a new one supersedes the last), and the address-trust links of their window.
    maxEntries:
      2 +
      Math.ceil(ACCOUNT_TOKEN_TTL_MS.address_trust / hour) * (app.config.mail.outbox?.perAccountPerHour ?? DEFAULT_OUTBOX_CONFIG.perAccountPerHour),
    ttlMs: Math.max(...Object.values(ACCOUNT_TOKEN_TTL_MS)),
    perClient:
      "a user's reset and verification tokens (the newest of each) and the address-trust links mailed within their lifetime (MAIL_ACCOUNT_MAX_PER_HOUR)",
    atBound: 'no mail over its budget is sent, so no token is issued for it',
    config: ['MAIL_ACCOUNT_MAX_PER_HOUR'],
    size: () => largestOwner(prisma, 'account_tokens', 'user_id'),
  });
}
