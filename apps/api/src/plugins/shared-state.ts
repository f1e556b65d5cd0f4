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
import type { IdentityStores } from '../auth/identity.js';
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
  if (!url) {
    app.decorate('sharedState', {
      kind: 'memory',
      redis: undefined,
      stores: { revocations: new MemoryRevocationStore(), nonces: new MemoryNonceStore(), knownLogins: new MemoryKnownLoginStore() },
      events: createMemoryEventBus(),
    } satisfies SharedState);
    return;
  }
  const { openRedisState } = await import('../shared-state/redis-state.js');
  const { redis, stores, events } = await openRedisState(url, app.log);
  app.decorate('sharedState', { kind: 'redis', redis, stores, events } satisfies SharedState);
  // Last: after the GraphQL plugin's preClose has ended the subscriptions that listen on it.
  app.addHook('onClose', async () => redis.close());
  app.log.info('shared state in Redis (several instances may run)');
}

export default fp(sharedStatePlugin, { name: 'shared-state' });
