// Picks where state shared by instances lives: Redis when REDIS_URL is set, else this process's memory.
//
// What Redis holds (each behind the same interface as its in-memory twin): the postCreated fan-out (event bus),
// the access-token logout blocklist, signed-request nonces, and rate-limit counters (plugins/rate-limit.ts).
// Idempotency-Key records are a port of shared-state/ too, kept in the database (every instance shares it), and
// built by the REST door (rest/plugin.ts), which alone uses them.
// When Redis is lost at run time (decided in issue 6, documented in the README "Running several instances"):
//   - security checks fail closed: a Bearer token (blocklist lookup), a logout, a signed request (nonce) → 503;
//     anonymous requests, session cookies and API keys do not touch Redis and keep working;
//   - rate limiting degrades open: counters are skipped (requests pass, without a shared budget) until it is back;
//   - subscription fan-out degrades: writes succeed, events published while Redis is down are lost, and
//     delivery resumes by itself on reconnect (the subscriber re-subscribes);
//   - /readyz reports `redis: "down"` but stays 200: Redis is shared by every instance, so failing readiness would
//     take all of them out of the balancer at once and turn a partial outage into a full one.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ACCESS_TTL_SECONDS } from '../auth/credentials/jwt.js';
import { SIGNATURE_WINDOW_MS } from '../auth/credentials/signature.js';
import type { IdentityStores } from '../auth/identity.js';
import { countRedisKeys } from '../shared-state/redis-size.js';
import type { StoreDeclaration } from '../bounds/stores.js';
import { KNOWN_LOGIN_TTL_MS } from '../rate-limits/buckets.js';
import type { EventBus } from '../shared-state/events/bus.js';
import { createMemoryEventBus } from '../shared-state/events/memory.js';
import { MemoryKnownLoginStore } from '../shared-state/known-logins/memory.js';
import { MemoryNonceStore } from '../shared-state/nonces/memory.js';
import type { RedisConnection } from '../shared-state/redis-connection.js';
import { MemoryRevocationStore } from '../shared-state/revocations/memory.js';

export interface SharedState {
  kind: 'memory' | 'redis';
  /** The Redis connection when REDIS_URL is set. */
  redis: RedisConnection | undefined;
  stores: IdentityStores;
  events: EventBus;
}

declare module 'fastify' {
  interface FastifyInstance {
    sharedState: SharedState;
  }
}

async function sharedStatePlugin(app: FastifyInstance): Promise<void> {
  const url = app.config.redisUrl;
  const bounds = app.config.storeBounds;
  if (!url) {
    const stores = {
      revocations: new MemoryRevocationStore(bounds.revocations),
      nonces: new MemoryNonceStore(bounds.nonces),
      knownLogins: new MemoryKnownLoginStore(bounds.knownLogins),
    };
    app.decorate('sharedState', { kind: 'memory', redis: undefined, stores, events: createMemoryEventBus() } satisfies SharedState);
    declareIdentityStores(app, 'memory', {
      nonces: () => ({ entries: stores.nonces.seen.size }),
      revocations: () => ({ entries: stores.revocations.entries.size }),
      knownLogins: () => ({ entries: stores.knownLogins.known.size }),
    });
    return;
  }
  const { openRedisState } = await import('../shared-state/redis-state.js');
  const { redis, stores, events } = await openRedisState(url, app.log);
  app.decorate('sharedState', { kind: 'redis', redis, stores, events } satisfies SharedState);
  const keys = (prefix: string, max: number) => async () => ({ entries: await countRedisKeys(redis.commands, prefix, max + 1) });
  declareIdentityStores(app, 'redis', {
    nonces: keys('nonce:', bounds.nonces),
    revocations: keys('revoked-jti:', bounds.revocations),
    knownLogins: keys('known-login:', bounds.knownLogins),
  });
  // Last: after the GraphQL plugin's preClose has ended the subscriptions that listen on it.
  app.addHook('onClose', async () => redis.close());
  app.log.info('shared state in Redis (several instances may run)');
}

/**
 * The identity stores' bounds (SPEC §0.2). In memory each holds at most its *_STORE_MAX keys; in Redis every key expires
 * with what it guards, and its size is what the entries it is written for allow (each is written only after a check
 * that a client cannot repeat at will: a valid signature, a logout, a successful login).
 */
function declareIdentityStores(
  app: FastifyInstance,
  home: 'memory' | 'redis',
  sizes: Record<'nonces' | 'revocations' | 'knownLogins', StoreDeclaration['size']>,
): void {
  const bounds = app.config.storeBounds;
  app.stores.declare({
    name: 'signed-request-nonces',
    home,
    scope: 'store',
    maxEntries: bounds.nonces,
    ttlMs: 2 * SIGNATURE_WINDOW_MS + 1,
    perClient: 'one per signed request whose signature holds (only a holder of SIGNING_SECRET adds one); kept as a bounded key',
    atBound: 'a signed request is refused (503) rather than a nonce forgotten (which would allow its replay)',
    config: ['NONCE_STORE_MAX'],
    size: sizes.nonces,
  });
  app.stores.declare({
    name: 'revoked-access-tokens',
    home,
    scope: 'store',
    maxEntries: bounds.revocations,
    ttlMs: ACCESS_TTL_SECONDS * 1000,
    perClient: 'one per logout of a valid access token (its jti, until the token expires)',
    atBound: 'the logout is refused (503) rather than a revocation forgotten',
    config: ['REVOCATION_STORE_MAX'],
    size: sizes.revocations,
  });
  app.stores.declare({
    name: 'known-logins',
    home,
    scope: 'store',
    maxEntries: bounds.knownLogins,
    ttlMs: KNOWN_LOGIN_TTL_MS,
    perClient: 'one per (account, address) of a successful login, a digest',
    atBound: 'a new pair is not remembered (the login succeeds; only its exemption from the per-account guard is not kept); none is evicted',
    config: ['KNOWN_LOGIN_STORE_MAX'],
    size: sizes.knownLogins,
  });
}

export default fp(sharedStatePlugin, { name: 'shared-state' });
