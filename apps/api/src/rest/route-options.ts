// Per-operation Fastify route options beyond the contract's own: the stricter rate-limit buckets of SPEC §4.
import type { OperationId } from '@users-posts/contracts';
import type { FastifyInstance, FastifyRequest, RouteShorthandOptions } from 'fastify';
import { AppError } from '../errors.js';

const MINUTE_MS = 60_000;

const rateLimited = (_request: FastifyRequest, context: { after: string }) =>
  new AppError('RATE_LIMITED', `Too many requests; retry in ${context.after}`);

/** Login attempts count per IP and e-mail, successful or not (the body is parsed by `preValidation`). */
function loginKey(request: FastifyRequest): string {
  const email = (request.body as { email?: unknown } | undefined)?.email;
  return `login|${request.ip}|${typeof email === 'string' ? email.toLowerCase() : ''}`;
}

export function routeOptions(app: FastifyInstance): Partial<Record<OperationId, RouteShorthandOptions>> {
  const { rateLimits } = app.config;
  return {
    login: {
      config: {
        rateLimit: { max: rateLimits.loginMax, timeWindow: MINUTE_MS, hook: 'preValidation', keyGenerator: loginKey, errorResponseBuilder: rateLimited },
      },
    },
    refreshTokens: {
      config: {
        rateLimit: { max: rateLimits.refreshMax, timeWindow: MINUTE_MS, keyGenerator: (request) => `refresh|${request.ip}`, errorResponseBuilder: rateLimited },
      },
    },
  };
}
