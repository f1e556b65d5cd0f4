// Safe retries of the REST door's writes (draft-ietf-httpapi-idempotency-key-header, as Stripe does it): the first
// request with an `Idempotency-Key` runs and its answer (status, the headers a client needs, the body bytes) is kept
// in the database for IDEMPOTENCY_TTL_SECONDS with a fingerprint of the request; a retry with the same key and the
// same request gets that answer again without running (no second row, no second event); the same key with another
// request → 422; while the first still runs → 409 (40901). Keys belong to the caller (a user, or the signing service;
// anonymous requests keep none). Kept behind the IdempotencyStore port (shared-state/idempotency/), in the database so
// every instance sees them. Written by hand: no maintained Fastify plugin stores answers across instances
// (fastify-idempotency keeps them in one process's memory).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHmac, randomUUID } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import { AppError } from '../errors/app-error.js';
import type { ClaimedKey, IdempotencyStore } from '../shared-state/idempotency/store.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** How long a first request may run before a retry may take its key over (it crashed, or its instance died). */
const RUN_LEASE_MS = 60_000;
/** The answer's headers a retry gets back with its body (rate-limit headers are the retry's own). */
const KEPT_HEADERS = ['content-type', 'location', 'etag'] as const;

const kRecord = Symbol('idempotencyRecord');
/** The claimed record, and the claim's own token: a run whose lease was taken over cannot write or drop the record. */
type KeyedRequest = FastifyRequest & { [kRecord]?: ClaimedKey };

/** Whose key; undefined for an anonymous caller, whose keys are not kept (anyone could fill one shared scope). */
const scopeOf = (principal: Principal) =>
  principal.kind === 'user' ? `user:${principal.userId}` : principal.kind === 'service' ? 'service' : undefined;

/** A signed request's one-time parameters: each retry signs afresh, so they are not part of what it repeats. */
const SIGNATURE_PARAMETERS = new Set(['timestamp', 'nonce', 'signature']);

/** The rights a request ran with: a retry made with other rights is not answered from the record (issue 31, item 5). */
const rightsOf = (principal: Principal) => (principal.kind === 'anonymous' ? 'anonymous' : principal.role);
const RIGHTS = ['USER', 'ADMIN'] as const;

/**
 * The request as a retry must repeat it: method, URL (without the signature's one-time parameters), its `If-Match`,
 * the parsed body, and the caller's rights (its role). An HMAC keyed with a server secret, not a bare hash: a sign-up
 * body holds a password, and a record must not give whoever reads the database a fast hash of it to guess against.
 */
function fingerprintOf(request: FastifyRequest, secret: string, rights: string = rightsOf(request.principal)): string {
  const [path, query = ''] = request.url.split('?', 2);
  const kept = query
    .split('&')
    .filter((pair) => pair !== '' && !SIGNATURE_PARAMETERS.has(decodeURIComponent(pair.split('=')[0]!)))
    .join('&');
  return createHmac('sha256', secret)
    .update(`${request.method} ${path}?${kept}\n${request.headers['if-match'] ?? ''}\n${JSON.stringify(request.body ?? null)}\n${rights}`)
    .digest('base64url');
}

export interface IdempotencyOptions {
  store: IdempotencyStore;
  /** The key of the fingerprints' HMAC. */
  secret: string;
  ttlSeconds: number;
}

/** The route hooks of the keyed operations: `preHandler` claims the key, `onSend` keeps the answer. */
export interface IdempotencyHooks {
  claim(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined>;
  record(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void): void;
}

export function idempotencyHooks(options: IdempotencyOptions): IdempotencyHooks {
  return {
    claim: (request, reply) => claimIdempotencyKey(options, request, reply),
    record: (request, reply, payload, done) => recordIdempotentAnswer(options.store, request, reply, payload, done),
  };
}

/**
 * Route `preHandler` of the keyed operations (those whose contract declares the header): without a key, nothing
 * happens. With one: the first request claims it and runs; a retry of a finished one is answered from the record.
 */
async function claimIdempotencyKey(options: IdempotencyOptions, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const key = request.headers[IDEMPOTENCY_HEADER];
  const scope = scopeOf(request.principal);
  if (typeof key !== 'string' || scope === undefined) return undefined;
  const { store } = options;
  const fingerprint = fingerprintOf(request, options.secret);
  const ttlMs = options.ttlSeconds * 1000;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const now = Date.now();
    const claim = randomUUID();
    if (await store.create({ scope, key, claim }, { fingerprint, lockedUntil: now + RUN_LEASE_MS, expiresAt: now + ttlMs })) {
      (request as KeyedRequest)[kRecord] = { scope, key, claim };
      return undefined; // first: run
    }
    const existing = await store.find(scope, key);
    if (!existing) continue; // expired and removed meanwhile: claim again
    // Expired: dropped and claimed anew, unless it still runs (a TTL shorter than the run: never under its feet).
    if (existing.expiresAt <= now && (existing.answer !== undefined || existing.lockedUntil <= now)) {
      await store.drop({ scope, key, claim: existing.claim });
      continue;
    }
    if (existing.fingerprint !== fingerprint) {
      // The same request made with other rights (a demoted ADMIN): the answer the first run earned is not handed out.
      if (RIGHTS.some((rights) => fingerprintOf(request, options.secret, rights) === existing.fingerprint)) {
        throw new AppError('FORBIDDEN', "This Idempotency-Key's request was made with other rights: its answer is not replayed; send a new request");
      }
      throw new AppError('VALIDATION_FAILED', 'This Idempotency-Key was used for a different request: use a new key for a new request', [
        { field: 'Idempotency-Key', message: 'was used for a different request' },
      ]);
    }
    if (existing.answer === undefined) {
      // Still running, unless its lease ran out (a crashed request): then this retry takes the key over, with a claim
      // of its own, so that the first run, should it still answer, can neither record nor release it.
      const takenOver =
        existing.lockedUntil <= now && (await store.takeOver({ scope, key, claim: existing.claim }, { claim, lockedUntil: now + RUN_LEASE_MS }));
      if (!takenOver) {
        throw new AppError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still running: retry once it has answered');
      }
      (request as KeyedRequest)[kRecord] = { scope, key, claim };
      return undefined;
    }
    // A retry of a finished request: its answer again, byte for byte.
    reply.code(existing.answer.status).headers({ ...existing.answer.headers, 'idempotent-replayed': 'true' });
    return reply.send(existing.answer.body ?? undefined);
  }
  throw new AppError('IDEMPOTENCY_KEY_IN_USE', 'This Idempotency-Key is being claimed by another request: retry');
}

/**
 * Route `onSend` of the keyed operations, last: the claimed key's record gets the answer (status, kept headers, the
 * body as sent); a 5xx, 408 or 429 releases the key instead, so that a retry runs again. Written before the answer leaves, so a
 * retry that follows it finds it.
 */
function recordIdempotentAnswer(
  store: IdempotencyStore,
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
): void {
  const claimed = (request as KeyedRequest)[kRecord];
  if (!claimed) return done(null, payload);
  (request as KeyedRequest)[kRecord] = undefined;
  // Not kept: a server failure, a timeout or a rate limit says nothing about the write; its retry must run again.
  const release = reply.statusCode >= 500 || reply.statusCode === 408 || reply.statusCode === 429;
  const stored = release
    ? store.drop(claimed)
    : store.keep(claimed, {
        status: reply.statusCode,
        headers: Object.fromEntries(KEPT_HEADERS.flatMap((name) => (reply.hasHeader(name) ? [[name, String(reply.getHeader(name))]] : []))),
        body: typeof payload === 'string' ? payload : payload === undefined || payload === null ? null : String(payload),
      });
  stored.then(
    () => done(null, payload),
    (error: unknown) => {
      // The answer still goes out; the key stays claimed until its lease ends, then a retry runs again.
      request.log.error({ err: error }, 'could not record the answer of an Idempotency-Key');
      done(null, payload);
    },
  );
}
