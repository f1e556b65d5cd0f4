// Rate limits of SPEC §4 on every response: a default bucket per client and stricter per-route buckets
// (`config.rateBucket`), counted by @fastify/rate-limit's limiter and store (in memory, or in Redis with REDIS_URL so
// every instance shares one budget), with the headers of both conventions:
//   X-RateLimit-Limit / -Remaining / -Reset (reset = absolute unix seconds),
//   RateLimit-Policy `<limit>;w=<window s>` and RateLimit `limit=…, remaining=…, reset=<seconds from now>` (IETF draft),
//   and Retry-After (seconds) on 429.
//
// When a request is counted: in a root `preValidation` hook, which runs after the auth plugin's `preValidation` hook
// (registered earlier) and before any route's own `preValidation` (REST permission checks). So the body is parsed
// (the login bucket keys on its e-mail) and `request.principal` is the *verified* caller: the default bucket is keyed
// on the user id when authenticated, else on the IP. A raw Authorization header is never trusted as a key (anyone
// could send another user's id to drain their bucket, or a fresh fake token per request to get fresh buckets).
// Requests that fail before that point (bad credentials → 401, body too large → 413, malformed JSON, unknown
// version) are counted in `onSend` against the default bucket by IP, so they carry the headers too and repeated
// failures (e.g. credential guessing) still use up the caller's quota.
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors.js';

/** A rate-limit bucket: `max` requests per `windowMs` for each client key. */
export interface RateBucket {
  /** Prefix of the bucket's counter keys (distinct per bucket). */
  name: string;
  max: number;
  windowMs: number;
  /** The client within the bucket (called once body parsing and authentication are done). */
  key: (request: FastifyRequest) => string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A stricter bucket counting this route instead of the default one (SPEC §4: login, refresh). */
    rateBucket?: RateBucket;
  }
}

/** What one counted request left in its bucket. */
interface BucketState {
  limit: number;
  remaining: number;
  windowMs: number;
  /** Epoch milliseconds when the window resets. */
  resetAt: number;
  exceeded: boolean;
}

type Limiter = ReturnType<FastifyInstance['createRateLimit']>;

const kState = Symbol('rateLimitState');
type CountedRequest = FastifyRequest & { [kState]?: BucketState };

/** The default bucket's client: the verified user, else the IP (IPv6 by /64, as @fastify/rate-limit does). */
export function clientKey(request: FastifyRequest): string {
  const principal = request.principal;
  if (principal?.kind === 'user') return `user:${principal.userId}`;
  const ip = normalizeIP(request.ip);
  return principal?.kind === 'service' ? `service:${ip}` : `ip:${ip}`;
}

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

function writeHeaders(reply: FastifyReply, state: BucketState): void {
  const now = Date.now();
  const resetIn = seconds(state.resetAt - now);
  reply.header('x-ratelimit-limit', state.limit);
  reply.header('x-ratelimit-remaining', state.remaining);
  reply.header('x-ratelimit-reset', Math.ceil(state.resetAt / 1000));
  reply.header('ratelimit-policy', `${state.limit};w=${seconds(state.windowMs)}`);
  reply.header('ratelimit', `limit=${state.limit}, remaining=${state.remaining}, reset=${resetIn}`);
  if (state.exceeded && reply.statusCode === 429) reply.header('retry-after', Math.max(1, resetIn));
}

async function rateLimitPlugin(app: FastifyInstance): Promise<void> {
  // Only the limiter and its store are used (`createRateLimit`); the hooks below decide which bucket counts a request.
  // With REDIS_URL the counters live in Redis (one budget across instances). A Redis failure skips counting
  // (degrade open, see plugins/shared-state.ts) instead of failing every request.
  const redis = app.sharedState.redis;
  await app.register(rateLimit, redis ? { global: false, redis: redis.commands, nameSpace: 'rate-limit:', skipOnError: true } : { global: false });

  const defaultBucket: RateBucket = {
    name: 'default',
    max: app.config.defaultRateLimit.max,
    windowMs: app.config.defaultRateLimit.windowMs,
    key: clientKey,
  };
  const limiters = new Map<string, Limiter>();
  const limiterFor = (bucket: RateBucket): Limiter => {
    let limiter = limiters.get(bucket.name);
    if (!limiter) {
      limiter = app.createRateLimit({
        max: bucket.max,
        timeWindow: bucket.windowMs,
        keyGenerator: (request) => `${bucket.name}|${bucket.key(request)}`,
      });
      limiters.set(bucket.name, limiter);
    }
    return limiter;
  };

  async function count(request: CountedRequest, bucket: RateBucket): Promise<BucketState> {
    const existing = request[kState];
    if (existing) return existing;
    const result = await limiterFor(bucket)(request);
    const state: BucketState = result.isAllowed
      ? { limit: bucket.max, remaining: bucket.max, windowMs: bucket.windowMs, resetAt: Date.now() + bucket.windowMs, exceeded: false }
      : { limit: result.max, remaining: result.remaining, windowMs: result.timeWindow, resetAt: Date.now() + result.ttl, exceeded: result.isExceeded };
    request[kState] = state;
    return state;
  }

  app.addHook('preValidation', async (request: CountedRequest) => {
    const state = await count(request, request.routeOptions.config?.rateBucket ?? defaultBucket);
    if (state.exceeded) {
      throw new AppError('RATE_LIMITED', `Too many requests; retry in ${seconds(state.resetAt - Date.now())} s`);
    }
  });

  app.addHook('onSend', async (request: CountedRequest, reply) => {
    try {
      writeHeaders(reply, await count(request, defaultBucket));
    } catch (error) {
      request.log.warn({ err: error }, 'rate-limit headers not written');
    }
  });
}

export default fp(rateLimitPlugin, { name: 'rate-limit', dependencies: ['auth', 'error-handler', 'shared-state'] });
