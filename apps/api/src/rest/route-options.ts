// Per-operation Fastify route options beyond the contract's own: the stricter rate-limit buckets of SPEC §4
// (counted instead of the default bucket by plugins/rate-limit.ts, which also writes their numbers in the headers).
import type { OperationId } from '@users-posts/contracts';
import type { FastifyInstance, FastifyRequest, RouteShorthandOptions } from 'fastify';
import type { RateBucket } from '../plugins/rate-limit.js';

const MINUTE_MS = 60_000;

/** Login attempts count per IP and e-mail, successful or not (the body is parsed by `preValidation`). */
function loginKey(request: FastifyRequest): string {
  const email = (request.body as { email?: unknown } | undefined)?.email;
  return `${request.ip}|${typeof email === 'string' ? email.toLowerCase() : ''}`;
}

export function routeOptions(app: FastifyInstance): Partial<Record<OperationId, RouteShorthandOptions>> {
  const { rateLimits } = app.config;
  const login: RateBucket = { name: 'login', max: rateLimits.loginMax, windowMs: MINUTE_MS, key: loginKey };
  const refresh: RateBucket = { name: 'refresh', max: rateLimits.refreshMax, windowMs: MINUTE_MS, key: (request) => request.ip };
  return {
    login: { config: { rateBucket: login } },
    refreshTokens: { config: { rateBucket: refresh } },
  };
}
