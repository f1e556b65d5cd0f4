// Per-operation Fastify route options beyond the contract's own: which stricter rate-limit buckets (rate-limits/buckets.ts)
// each REST operation counts on top of the default bucket (plugins/rate-limit.ts writes the most restrictive one in the headers).
import type { OperationId } from '@users-posts/contracts';
import type { FastifyInstance, RouteShorthandOptions } from 'fastify';
import { clientAddress } from '../http/client-address.js';
import { accountBuckets, loginBuckets } from '../rate-limits/buckets.js';
import type { RateBucket } from '../http/rate-bucket.js';

const MINUTE_MS = 60_000;

export function routeOptions(app: FastifyInstance): Partial<Record<OperationId, RouteShorthandOptions>> {
  const { rateLimits } = app.config;
  const refresh: RateBucket = { name: 'refresh', max: rateLimits.refreshMax, windowMs: MINUTE_MS, key: clientAddress };
  const account = Object.entries(accountBuckets(rateLimits)).map(([operation, rateBuckets]) => [operation, { config: { rateBuckets } }]);
  return {
    login: { config: { rateBuckets: loginBuckets(rateLimits), credentialsCountAsLoginFailure: true } },
    refreshTokens: { config: { rateBuckets: [refresh] } },
    ...Object.fromEntries(account),
  };
}
