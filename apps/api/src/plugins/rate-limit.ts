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
import { boundedKey } from '../bounds/keys.js';
import { countRedisKeys } from '../shared-state/redis-size.js';
import { clientKey } from '../http/client-address.js';
import { AppError } from '../errors/app-error.js';
import type { RateBucket } from '../http/rate-bucket.js';
import { settleHook } from './settle-hook.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Stricter buckets counting this route on top of the default one (SPEC §4: login, refresh). */
    rateBuckets?: RateBucket[];
    /** The operation needs a credential: an anonymous call is refused (401) before its stricter buckets count it (SPEC §0.3). */
    needsCredential?: boolean;
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
const HOUR_MS = 3_600_000;
/** What one in-memory counter costs: its bounded key (bounds/keys.ts, prefixed by its bucket), the record and the Map's entry. */
const COUNTER_BYTES = 256;

/** A request's key in one bucket, bounded in size (bounds/keys.ts) whatever the client sent. */
const storeKey = (request: FastifyRequest, bucket: RateBucket) =>
  `${bucket.name}|${boundedKey((request as KeyedRequest)[kFixedKey] ?? bucket.key(request))}`;

/** A bucket that could not take a new key: the request is refused with 503 until the store's oldest window ends. */
function storeFullState(bucket: RateBucket, ttl: number): BucketState {
  const resetAt = Date.now() + ttl;
  const refusal = () =>
    new AppError(
      'STORE_FULL',
      `The server holds as many rate-limit counters as it may (RATE_LIMIT_STORE_MAX_KEYS); retry in ${Math.max(1, seconds(ttl))} s`,
    );
  return { limit: bucket.max, remaining: 0, windowMs: bucket.windowMs, resetAt, exceeded: true, refusal };
}

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

/** Keys held by every in-memory store of the limiter together, against RATE_LIMIT_STORE_MAX_KEYS. */
class KeyBudget {
  held = 0;
  readonly stores: WindowCounters[] = [];
  constructor(readonly max: number) {}

  /** Room for one more key, once the expired ones of every store are gone. */
  hasRoom(now: number): boolean {
    if (this.held < this.max) return true;
    for (const store of this.stores) store.sweep(now);
    return this.held < this.max;
  }
}

/** What a full store answers: a new key refused, every key already held still counted (SPEC §0.2). */
class StoreFullError extends Error {}

/**
 * Counters of one window length in memory, kept until their window ends and never evicted. @fastify/rate-limit's own
 * LocalStore (a private file of the package, `store/LocalStore.js`) keeps the 5,000 most recent keys, so 5,000 requests
 * on made-up keys (e-mails at the login bucket) would forget any account's or address's count (SPEC §3.3: counters not
 * forgotten under pressure). Bounded instead (SPEC §0.2): every key is short (bounds/keys.ts), the buckets keyed on
 * client input are counted only after the client's per-address buckets let it through (`count`), and all stores
 * together hold at most RATE_LIMIT_STORE_MAX_KEYS keys, past which a new key is refused (503) while every counter held
 * goes on. One store per window length: insertion order is expiry order, so the sweep stops at the first live one. By
 * hand: the store interface is @fastify/rate-limit's, and no kept store offers it without an LRU.
 */
class WindowCounters implements LocalStoreApi {
  private readonly counters = new Map<string, { current: number; resetAt: number }>(); // bound: KeyBudget (RATE_LIMIT_STORE_MAX_KEYS)

  constructor(private readonly budget: KeyBudget) {
    budget.stores.push(this);
  }

  get size(): number {
    return this.counters.size;
  }

  incr(key: string, callback: (error: Error | null, record: StoreRecord) => void, timeWindow: number): void {
    const now = Date.now();
    this.sweep(now);
    let counter = this.counters.get(key);
    if (!counter || counter.resetAt <= now) {
      if (counter) this.drop(key);
      if (!this.budget.hasRoom(now)) return callback(new StoreFullError(), { current: 0, ttl: this.oldestTtl(now) });
      counter = { current: 0, resetAt: now + timeWindow };
      this.counters.set(key, counter);
      this.budget.held += 1;
    }
    counter.current += 1;
    callback(null, { current: counter.current, ttl: counter.resetAt - now });
  }

  read(key: string, callback: (error: Error | null, record: StoreRecord) => void, timeWindow: number): void {
    const now = Date.now();
    const counter = this.counters.get(key);
    callback(null, counter && counter.resetAt > now ? { current: counter.current, ttl: counter.resetAt - now } : { current: 0, ttl: timeWindow });
  }

  sweep(now: number): void {
    for (const [key, counter] of this.counters) {
      if (counter.resetAt > now) break;
      this.drop(key);
    }
  }

  /** Until this store's oldest key ends (the Retry-After of a refused new key). */
  private oldestTtl(now: number): number {
    const oldest = this.counters.values().next().value;
    return oldest ? oldest.resetAt - now : 1000;
  }

  private drop(key: string): void {
    if (this.counters.delete(key)) this.budget.held -= 1;
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
  if (state.exceeded && (reply.statusCode === 429 || reply.statusCode === 503)) reply.header('retry-after', Math.max(1, resetIn));
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
  // bound: one per bucket of rate-limits/buckets.ts
  const limiters = new Map<string, Limiter>();
  const limiterFor = (bucket: RateBucket): Limiter => {
    let limiter = limiters.get(bucket.name);
    if (!limiter) {
      limiter = app.createRateLimit({
        max: bucket.max,
        timeWindow: bucket.windowMs,
        keyGenerator: (request) => storeKey(request, bucket),
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
  // per bucket, as createRateLimit gives each limiter its own (`store.child()`) — here one per window length, the buckets'
  // keys prefixed with their names, so the sweep of each runs in expiry order.
  const budget = new KeyBudget(app.config.storeBounds.rateLimitKeys);
  const localStores = redis ? undefined : new Map<number, WindowCounters>(); // bound: one per window length of the buckets
  const localStoreFor = (bucket: RateBucket): LocalStoreApi => {
    let store = localStores!.get(bucket.windowMs);
    if (!store) localStores!.set(bucket.windowMs, (store = new WindowCounters(budget)));
    return store;
  };
  app.stores.declare({
    name: 'rate-limit-counters',
    home: redis ? 'redis' : 'memory',
    scope: 'store',
    maxEntries: budget.max,
    maxBytes: budget.max * COUNTER_BYTES,
    ttlMs: Math.max(
      app.config.defaultRateLimit.windowMs,
      HOUR_MS,
      app.config.rateLimits.loginAccount.windowMs,
      app.config.rateLimits.signup.windowMs,
    ),
    perClient:
      'a key per bucket the request passes: the buckets keyed on client input (e-mails) are counted only once the per-address buckets let the request through, so one address adds at most their limits per window; keys over 96 characters are kept as their SHA-256',
    atBound: redis
      ? 'every key expires with its window in Redis (PEXPIRE); keys are bounded in size as in memory'
      : 'a new key is refused (503, Retry-After until the oldest window ends); no counter is evicted, every key held goes on counting',
    config: ['RATE_LIMIT_STORE_MAX_KEYS'],
    size: async () => {
      const entries = redis ? await countRedisKeys(redis.commands, 'rate-limit:', budget.max + 1) : budget.held;
      return { entries, bytes: entries * COUNTER_BYTES };
    },
  });

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
    let full = false;
    localStoreFor(bucket)[increment ? 'incr' : 'read'](
      storeKey(request, bucket),
      (error, record) => ((stored = record), (full = error instanceof StoreFullError)),
      bucket.windowMs,
      bucket.max,
    );
    if (full) return storeFullState(bucket, stored.ttl);
    return stateOf(bucket, stored, increment);
  }

  // Failures-only buckets learn of a failure only when it is answered (after the password check): attempts still in
  // progress are held here, so a burst of concurrent guesses cannot all pass the check before the first is counted.
  // (Per instance; with Redis the stored failures are shared, the attempts in progress are not.)
  const inFlight = new Map<string, number>(); // bound: one key per request in progress (HTTP_MAX_CONNECTIONS)
  const holdKey = (request: FastifyRequest, bucket: RateBucket) => storeKey(request, bucket);
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

  /**
   * Every bucket of the request in order, the default one first, counted once per request until one refuses it: the
   * buckets after a refusing one are not counted (SPEC §0.2). So a bucket keyed on client input (the login's and the
   * reset's e-mail, listed after the per-address ones) gains a key only for requests the client's address may send:
   * one address adds at most its per-address limits of keys per window, whatever it puts in the body.
   */
  function count(request: CountedRequest, withRouteBuckets: boolean): Counted<BucketState[]> {
    const existing = request[kStates];
    if (existing) return existing;
    // An anonymous call of an operation that needs a credential spends only its address's default budget: the 401
    // comes before any budget that belongs to an account (SPEC §0.3: a budget is counted for the caller it belongs to).
    const config = request.routeOptions.config;
    const routeBuckets =
      withRouteBuckets && !(config?.needsCredential === true && request.principal.kind === 'anonymous') ? (config?.rateBuckets ?? []) : [];
    const buckets = [defaultBucket, ...routeBuckets];
    const states: BucketState[] = [];
    const keep = () => (request[kStates] = states);
    const from = (index: number): Counted<BucketState[]> => {
      for (let at = index; at < buckets.length; at++) {
        const bucket = buckets[at]!;
        const state = at === 0 || bucket.countOnlyStatus === undefined ? countOne(request, bucket) : checkFailures(request, bucket);
        if (state instanceof Promise)
          return state.then((settled) => (states.push(settled), settled.exceeded ? keep() : from(at + 1))) as Promise<BucketState[]>;
        states.push(state);
        if (state.exceeded) break;
      }
      return keep();
    };
    return from(0);
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
