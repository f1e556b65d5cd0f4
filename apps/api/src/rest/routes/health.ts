// Liveness and readiness probes (/healthz, /readyz), declared in the contract like every route.
import type { OperationHandlers } from '@users-posts/contracts';
import type { RestContext } from '../context.js';

const READINESS_TIMEOUT_MS = 2_000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export const healthHandlers = {
  getHealth: async () => ({ status: 200, body: { status: 'ok' } }),

  getReadiness: async (_input, { request }) => {
    const { db, sharedState } = request.server;
    /** 'up' when `ping` answers within the readiness timeout, else 'down' (logged with `what`). */
    const probe = (ping: () => Promise<void>, what: string) =>
      withTimeout(ping(), READINESS_TIMEOUT_MS).then(
        () => 'up' as const,
        (error: unknown) => (request.log.warn({ err: error }, `${what} not reachable`), 'down' as const),
      );
    const redis = sharedState.redis;
    const [database, redisState] = await Promise.all([
      probe(() => db.ping(), 'database'),
      redis ? probe(() => redis.ping(), 'Redis') : ('not-configured' as const),
    ]);
    // Only the database decides readiness (see the ReadinessChecks schema for why Redis does not).
    const checks = { database, redis: redisState };
    return database === 'up' ? { status: 200, body: { status: 'ok', checks } } : { status: 503, body: { status: 'unavailable', checks } };
  },
} satisfies OperationHandlers<RestContext>;
