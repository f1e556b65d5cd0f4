// Rate limits of SPEC §4 on every response: a default bucket per client, always counted, plus stricter per-route buckets
// (`config.rateBuckets`, all counted too; the request is refused when any one is exceeded) and buckets used up by
// handlers (`app.consumeRateLimit`, e.g. once per account created), counted by @fastify/rate-limit (its in-memory store,
// or its limiter on Redis with REDIS_URL so every instance shares one budget), with the headers of both conventions:
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
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { clientKey } from '../http/client-address.js';
import { AppError } from '../errors/app-error.js';
import type { RateBucket } from '../http/rate-bucket.js';
import { settleHook } from './settle-hook.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Stricter buckets counting this route on top of the default one (SPEC §4: login, refresh). */
    rateBuckets?: RateBucket[];
  }
  interface FastifyInstance {
    /**
     * Uses up one unit of `bucket` for the client of `request` (or of the key given) outside the per-request hooks, e.g.
     * once per account created (sign-up bucket); throws RATE_LIMITED when the bucket is exceeded.
     */
    consumeRateLimit: (bucket: RateBucket, client: FastifyRequest | { key: string }) => Promise<void>;
    /** The default bucket (per user, else address), for doors counted outside the HTTP hooks (WebSocket upgrades, subscribe). */
    defaultRateBucket: RateBucket;
  }
}

/** What one counted request left in one bucket. */
interface BucketState {
  limit: number;
  remaining: number;
  windowMs: number;
  /** Epoch milliseconds when the window resets. */
  resetAt: number;
  exceeded: boolean;
  /** The refusing bucket's own error (RateBucket.refusal), when it has one. */
  refusal?: (() => AppError) | undefined;
}

type Limiter = ReturnType<FastifyInstance['createRateLimit']>;

const kStates = Symbol('rateLimitStates');
const kFixedKey = Symbol('rateLimitKey');
/** Keys of the failures-only buckets this request holds an attempt in (released when it is answered). */
const kHeld = Symbol('rateLimitHeld');
type CountedRequest = FastifyRequest & { [kStates]?: BucketState[]; [kHeld]?: string[] };
type KeyedRequest = FastifyRequest & { [kFixedKey]?: string };

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/** A count: at once from the in-memory store, a promise from Redis. */
type Counted<T> = T | Promise<T>;
const settle = <T, U>(value: Counted<T>, next: (value: T) => U): Counted<U> => (value instanceof Promise ? value.then(next) : next(value));

/** What a store holds for one key: requests counted in the current window, and ms until it resets. */
interface StoreRecord {
  current: number;
  ttl: number;
}
/** The store interface of @fastify/rate-limit (`incr`, `read`), answered synchronously. */
interface LocalStoreApi {
  incr(key: string, callback: (error: Error | null, record: StoreRecord) => void, timeWindow: number, max: number): void;
  read(key: string, callback: (error: Error | null, record: StoreRecord) => void, timeWindow: number, max: number): void;
}

/**
 * A bucket's counters in memory, kept until their window ends and never evicted. @fastify/rate-limit's own LocalStore
 * (a private file of the package, `store/LocalStore.js`) keeps the 5,000 most recent keys, so 5,000 requests on made-up
 * keys (e-mails at the login bucket) would forget any account's or address's count (SPEC §3.3: counters not forgotten
 * under pressure). Bounded by the keys one window can hold, which the per-address buckets bound. Every entry lives one
 * window: insertion order is expiry order, so the sweep stops at the first live one. By hand: the store interface is
 * @fastify/rate-limit's, and no kept store offers it without an LRU.
 */
class WindowCounters implements LocalStoreApi {
  private readonly counters = new Map<string, { current: number; resetAt: number }>();

  incr(key: string, callback: (error: Error | null, record: StoreRecord) => void, timeWindow: number): void {
    const now = Date.now();
    this.sweep(now);
    let counter = this.counters.get(key);
    if (!counter || counter.resetAt <= now) {
      this.counters.delete(key);
      counter = { current: 0, resetAt: now + timeWindow };
      this.counters.set(key, counter);
    }
    counter.current += 1;
    callback(null, { current: counter.current, ttl: counter.resetAt - now });
  }

  read(key: string, callback: (error: Error | null, record: StoreRecord) => void, timeWindow: number): void {
    const now = Date.now();
    const counter = this.counters.get(key);
    callback(null, counter && counter.resetAt > now ? { current: counter.current, ttl: counter.resetAt - now } : { current: 0, ttl: timeWindow });
  }

  private sweep(now: number): void {
    for (const [key, counter] of this.counters) {
      if (counter.resetAt > now) break;
      this.counters.delete(key);
    }
  }
}

/** One bucket after a count in the in-memory store, as @fastify/rate-limit's limiter reports it. */
function stateOf(bucket: RateBucket, { current, ttl }: StoreRecord, increment: boolean): BucketState {
  const remaining = Math.max(0, bucket.max - current);
  return {
    limit: bucket.max,
    remaining,
    windowMs: bucket.windowMs,
    resetAt: Date.now() + ttl,
    // A read-only check (failures-only buckets) refuses once the failures so far reached the limit.
    exceeded: increment ? current > bucket.max : remaining <= 0,
  };
}

/**
 * The bucket whose numbers the headers show. On a refusal: the exceeded bucket that resets last (Retry-After must be
 * the time after which the request can succeed). Otherwise the most restrictive: fewest requests left, then latest reset
 * (a client pacing itself by these numbers then stays within every bucket).
 */
export function mostRestrictive(states: BucketState[]): BucketState {
  const exceeded = states.filter((state) => state.exceeded);
  const pool = exceeded.length > 0 ? exceeded : states;
  return pool.reduce((worst, state) =>
    exceeded.length > 0
      ? state.resetAt > worst.resetAt
        ? state
        : worst
      : state.remaining < worst.remaining || (state.remaining === worst.remaining && state.resetAt > worst.resetAt)
        ? state
        : worst,
  );
}

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

const tooMany = (state: BucketState) =>
  state.refusal?.() ?? new AppError('RATE_LIMITED', `Too many requests; retry in ${Math.max(1, seconds(state.resetAt - Date.now()))} s`);

async function rateLimitPlugin(app: FastifyInstance): Promise<void> {
  // Only @fastify/rate-limit's stores are used, never its hooks: the hooks below decide which buckets count a request.
  // With REDIS_URL the counters live in Redis (one budget across instances), through its limiter (`createRateLimit`);
  // a Redis failure skips counting (degrade open, see plugins/shared-state.ts) instead of failing every request.
  // In memory, through WindowCounters directly (below), so the plugin itself is registered with Redis only.
  const redis = app.sharedState.redis;
  if (redis) await app.register(rateLimit, { global: false, redis: redis.commands, nameSpace: 'rate-limit:', skipOnError: true });

  const defaultBucket: RateBucket = {
    name: 'default',
    max: app.config.defaultRateLimit.max,
    windowMs: app.config.defaultRateLimit.windowMs,
    key: clientKey,
  };
  app.decorate('defaultRateBucket', defaultBucket);
  const limiters = new Map<string, Limiter>();
  const limiterFor = (bucket: RateBucket): Limiter => {
    let limiter = limiters.get(bucket.name);
    if (!limiter) {
      limiter = app.createRateLimit({
        max: bucket.max,
        timeWindow: bucket.windowMs,
        keyGenerator: (request) => `${bucket.name}|${(request as KeyedRequest)[kFixedKey] ?? bucket.key(request)}`,
      });
      limiters.set(bucket.name, limiter);
    }
    return limiter;
  };

  // In memory (no REDIS_URL), buckets are counted in WindowCounters, called directly: it answers synchronously, so
  // every request is counted without a promise, and concurrent counts of one key (a GraphQL batch creating users,
  // parallel requests of one client) cannot read each other's record. (Through createRateLimit a store answers after
  // an `await`, when its mutable record may already hold a later count.) With Redis, through the limiter. One store
  // per bucket, as createRateLimit gives each limiter its own (`store.child()`).
  const localStores = redis ? undefined : new Map<string, LocalStoreApi>();
  const localStoreFor = (bucket: RateBucket): LocalStoreApi => {
    let store = localStores!.get(bucket.name);
    if (!store) localStores!.set(bucket.name, (store = new WindowCounters()));
    return store;
  };

  /** Counts (or, with `increment: false`, only reads) one bucket for `request`: at once in memory, a round trip with Redis. */
  function countOne(request: FastifyRequest, bucket: RateBucket, increment = true): Counted<BucketState> {
    if (!localStores)
      return limiterFor(bucket)(request, { increment }).then((result) =>
        result.isAllowed
          ? { limit: bucket.max, remaining: bucket.max, windowMs: bucket.windowMs, resetAt: Date.now() + bucket.windowMs, exceeded: false }
          : {
              limit: result.max,
              remaining: result.remaining,
              windowMs: result.timeWindow,
              resetAt: Date.now() + result.ttl,
              exceeded: increment ? result.isExceeded : result.remaining <= 0,
            },
      );
    let stored: StoreRecord = { current: 0, ttl: 0 };
    const key = `${bucket.name}|${(request as KeyedRequest)[kFixedKey] ?? bucket.key(request)}`;
    localStoreFor(bucket)[increment ? 'incr' : 'read'](key, (_error, record) => (stored = record), bucket.windowMs, bucket.max);
    return stateOf(bucket, stored, increment);
  }

  // Failures-only buckets learn of a failure only when it is answered (after the password check): attempts still in
  // progress are held here, so a burst of concurrent guesses cannot all pass the check before the first is counted.
  // (Per instance; with Redis the stored failures are shared, the attempts in progress are not.)
  const inFlight = new Map<string, number>();
  const holdKey = (request: FastifyRequest, bucket: RateBucket) => `${bucket.name}|${bucket.key(request)}`;
  function release(request: CountedRequest): void {
    for (const key of request[kHeld] ?? []) {
      const left = (inFlight.get(key) ?? 1) - 1;
      if (left > 0) inFlight.set(key, left);
      else inFlight.delete(key);
    }
    request[kHeld] = [];
  }

  /**
   * A failures-only bucket: refused when the failures counted plus the attempts in progress reach its max, unless the
   * bucket exempts the request (an address the account's owner has logged in from: it is never refused by it).
   */
  function checkFailures(request: CountedRequest, bucket: RateBucket): Counted<BucketState> {
    // (A promise returned inside the store's promise is flattened by `then`: the result is one Counted level.)
    return settle(countOne(request, bucket, false), (state): Counted<BucketState> => {
      const key = holdKey(request, bucket);
      const held = inFlight.get(key) ?? 0;
      const remaining = Math.max(0, state.remaining - held);
      if (state.exceeded || remaining <= 0) {
        const { refusal } = bucket;
        const refused = { ...state, remaining: 0, exceeded: true, ...(refusal ? { refusal: () => refusal(request) } : {}) };
        if (!bucket.exemptIf) return refused;
        return settle(bucket.exemptIf(request), (exempt) => (exempt ? { ...refused, exceeded: false } : refused));
      }
      inFlight.set(key, held + 1);
      (request[kHeld] ??= []).push(key);
      return { ...state, remaining: remaining - 1 };
    }) as Counted<BucketState>;
  }

  /** Every bucket of the request, the default one first: counted once per request, all of them. */
  function count(request: CountedRequest, withRouteBuckets: boolean): Counted<BucketState[]> {
    const existing = request[kStates];
    if (existing) return existing;
    const buckets = withRouteBuckets ? (request.routeOptions.config?.rateBuckets ?? []) : [];
    const counted = [
      countOne(request, defaultBucket),
      ...buckets.map((bucket) => (bucket.countOnlyStatus === undefined ? countOne(request, bucket) : checkFailures(request, bucket))),
    ];
    const keep = (states: BucketState[]) => (request[kStates] = states);
    return counted.some((state) => state instanceof Promise) ? Promise.all(counted).then(keep) : keep(counted as BucketState[]);
  }

  const refusal = (states: BucketState[]): AppError | undefined => {
    const state = mostRestrictive(states);
    return state.exceeded ? tooMany(state) : undefined;
  };
  // Callback form: in memory nothing is awaited, so no promise per request.
  app.addHook('preValidation', (request: CountedRequest, _reply, done) => settleHook(count(request, true), refusal, done, 'rate limit not counted'));

  // The headers of what preValidation counted, at once (callback form: no promise per request); a request answered
  // before preValidation (404, a bad body) is counted here.
  app.addHook('onSend', (request: CountedRequest, reply, payload, done) => {
    const write = (states: BucketState[]) => writeHeaders(reply, mostRestrictive(states));
    const warn = (error: unknown) => request.log.warn({ err: error }, 'rate-limit headers not written');
    let counted: Counted<BucketState[]>;
    try {
      counted = count(request, false);
      if (!(counted instanceof Promise)) write(counted);
    } catch (error) {
      warn(error);
      return done(null, payload);
    }
    if (!(counted instanceof Promise)) return done(null, payload);
    void counted
      .then(write)
      .catch(warn)
      .finally(() => done(null, payload));
  });

  // Failures-only buckets (per-account login) use up a unit once the answer is known to be that failure.
  app.addHook('onResponse', (request: CountedRequest, reply, done) => {
    const failures = (request.routeOptions.config?.rateBuckets ?? []).filter(
      (bucket) => bucket.countOnlyStatus !== undefined && reply.statusCode === bucket.countOnlyStatus && (bucket.countOnlyIf?.(request) ?? true),
    );
    if (failures.length === 0) {
      release(request);
      return done();
    }
    void (async () => {
      for (const bucket of failures) await countOne(request, bucket);
    })()
      .catch((error: unknown) => request.log.warn({ err: error }, 'rate-limit failure not counted'))
      .finally(() => {
        release(request);
        done();
      });
  });
  app.addHook('onRequestAbort', async (request: CountedRequest) => release(request));

  app.decorate('consumeRateLimit', async (bucket: RateBucket, client: FastifyRequest | { key: string }) => {
    // Without an HTTP request (a WebSocket operation) the caller names the client; the limiter reads it from here.
    const request = 'raw' in client ? client : ({ [kFixedKey]: client.key, routeOptions: { config: {} } } as unknown as FastifyRequest);
    const state = await countOne(request, bucket);
    // The headers of this answer then also weigh this bucket (the most restrictive one is shown).
    (request as CountedRequest)[kStates]?.push(state);
    if (state.exceeded) throw tooMany(state);
  });
}

export default fp(rateLimitPlugin, { name: 'rate-limit', dependencies: ['auth', 'error-handler', 'shared-state'] });
