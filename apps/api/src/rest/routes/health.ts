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
    try {
      await withTimeout(request.server.db.ping(), READINESS_TIMEOUT_MS);
      return { status: 200, body: { status: 'ok' } };
    } catch (error) {
      request.log.warn({ err: error }, 'database not reachable');
      return { status: 503, body: { status: 'unavailable' } };
    }
  },
} satisfies OperationHandlers<RestContext>;
