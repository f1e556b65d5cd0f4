// Safe retries of the REST door's writes (draft-ietf-httpapi-idempotency-key-header, as Stripe does it): the first
// request with an `Idempotency-Key` runs and its answer (status, the headers a client needs, the body bytes) is kept
// in the database for IDEMPOTENCY_TTL_SECONDS with a fingerprint of the request; a retry with the same key and the
// same request gets that answer again without running (no second row, no second event); the same key with another
// request → 422; while the first still runs → 409 (40901). Keys belong to the caller (a user, or the signing service;
// anonymous requests keep none). Kept in the database so every instance sees them. Written by hand: no maintained
// Fastify plugin stores answers across instances (fastify-idempotency keeps them in one process's memory).
import type { Prisma, PrismaClient } from '@users-posts/db';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHmac, randomUUID } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import { AppError } from '../errors/app-error.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** How long a first request may run before a retry may take its key over (it crashed, or its instance died). */
const RUN_LEASE_MS = 60_000;
/** The answer's headers a retry gets back with its body (rate-limit headers are the retry's own). */
const KEPT_HEADERS = ['content-type', 'location', 'etag'] as const;

const kRecord = Symbol('idempotencyRecord');
/** The claimed record, and the claim's own token: a run whose lease was taken over cannot write or drop the record. */
type Claim = { scope: string; key: string; claim: string };
type KeyedRequest = FastifyRequest & { [kRecord]?: Claim };

/** Whose key; undefined for an anonymous caller, whose keys are not kept (anyone could fill one shared scope). */
const scopeOf = (principal: Principal) => (principal.kind === 'user' ? `user:${principal.userId}` : principal.kind === 'service' ? 'service' : undefined);

/** A signed request's one-time parameters: each retry signs afresh, so they are not part of what it repeats. */
const SIGNATURE_PARAMETERS = new Set(['timestamp', 'nonce', 'signature']);

/**
 * The request as a retry must repeat it: method, URL (without the signature's one-time parameters), its `If-Match`,
 * and the parsed body. An HMAC keyed with a server secret, not a bare hash: a sign-up body holds a password, and a
 * record must not give whoever reads the database a fast hash of it to guess against.
 */
function fingerprintOf(request: FastifyRequest, secret: string): string {
  const [path, query = ''] = request.url.split('?', 2);
  const kept = query
    .split('&')
    .filter((pair) => pair !== '' && !SIGNATURE_PARAMETERS.has(decodeURIComponent(pair.split('=')[0]!)))
    .join('&');
  return createHmac('sha256', secret)
    .update(`${request.method} ${path}?${kept}\n${request.headers['if-match'] ?? ''}\n${JSON.stringify(request.body ?? null)}`)
    .digest('base64url');
}

const isUniqueViolation = (error: unknown) => (error as { code?: unknown }).code === 'P2002';

/**
 * Route `preHandler` of the keyed operations (those whose contract declares the header): without a key, nothing
 * happens. With one: the first request claims it and runs; a retry of a finished one is answered from the record.
 */
export async function claimIdempotencyKey(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const key = request.headers[IDEMPOTENCY_HEADER];
  const scope = scopeOf(request.principal);
  if (typeof key !== 'string' || scope === undefined) return undefined;
  const prisma = request.server.db.prisma;
  const fingerprint = fingerprintOf(request, request.server.config.secrets.session);
  const ttlMs = request.server.config.idempotencyTtlSeconds * 1000;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const now = Date.now();
    const claim = randomUUID();
    try {
      await prisma.idempotencyRecord.create({
        data: { scope, key, claim, fingerprint, lockedUntil: new Date(now + RUN_LEASE_MS), expiresAt: new Date(now + ttlMs) },
      });
      (request as KeyedRequest)[kRecord] = { scope, key, claim };
      return undefined; // first: run
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
    const existing = await prisma.idempotencyRecord.findUnique({ where: { scope_key: { scope, key } } });
    if (!existing) continue; // expired and removed meanwhile: claim again
    // Expired: dropped and claimed anew, unless it still runs (a TTL shorter than the run: never under its feet).
    if (existing.expiresAt.getTime() <= now && (existing.status !== null || existing.lockedUntil.getTime() <= now)) {
      await prisma.idempotencyRecord.deleteMany({ where: { scope, key, claim: existing.claim } });
      continue;
    }
    if (existing.fingerprint !== fingerprint) {
      throw new AppError('VALIDATION_FAILED', 'This Idempotency-Key was used for a different request: use a new key for a new request', [
        { field: 'Idempotency-Key', message: 'was used for a different request' },
      ]);
    }
    if (existing.status === null) {
      // Still running, unless its lease ran out (a crashed request): then this retry takes the key over, with a claim
      // of its own, so that the first run, should it still answer, can neither record nor release it.
      const takenOver =
        existing.lockedUntil.getTime() <= now &&
        (await prisma.idempotencyRecord.updateMany({ where: { scope, key, claim: existing.claim, status: null }, data: { claim, lockedUntil: new Date(now + RUN_LEASE_MS) } }))
          .count === 1;
      if (!takenOver) {
        throw new AppError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still running: retry once it has answered');
      }
      (request as KeyedRequest)[kRecord] = { scope, key, claim };
      return undefined;
    }
    // A retry of a finished request: its answer again, byte for byte.
    reply.code(existing.status).headers({ ...(existing.headers as Record<string, string>), 'idempotent-replayed': 'true' });
    return reply.send(existing.body ?? undefined);
  }
  throw new AppError('IDEMPOTENCY_KEY_IN_USE', 'This Idempotency-Key is being claimed by another request: retry');
}

/**
 * Route `onSend` of the keyed operations, last: the claimed key's record gets the answer (status, kept headers, the
 * body as sent); a 5xx, 408 or 429 releases the key instead, so that a retry runs again. Written before the answer leaves, so a
 * retry that follows it finds it.
 */
export function recordIdempotentAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void): void {
  const claimed = (request as KeyedRequest)[kRecord];
  if (!claimed) return done(null, payload);
  (request as KeyedRequest)[kRecord] = undefined;
  const prisma: PrismaClient = request.server.db.prisma;
  // Not kept: a server failure, a timeout or a rate limit says nothing about the write; its retry must run again.
  const release = reply.statusCode >= 500 || reply.statusCode === 408 || reply.statusCode === 429;
  const stored = release
    ? prisma.idempotencyRecord.deleteMany({ where: claimed })
    : prisma.idempotencyRecord.updateMany({
          where: claimed,
          data: {
            status: reply.statusCode,
            headers: Object.fromEntries(KEPT_HEADERS.flatMap((name) => (reply.hasHeader(name) ? [[name, String(reply.getHeader(name))]] : []))) as Prisma.InputJsonObject,
            body: typeof payload === 'string' ? payload : payload === undefined || payload === null ? null : String(payload),
          },
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

/** Removes expired records (every instance, hourly: expired ones are also skipped and replaced when met). */
export function purgeExpiredIdempotencyRecords(prisma: PrismaClient): Promise<unknown> {
  return prisma.idempotencyRecord.deleteMany({ where: { expiresAt: { lte: new Date() } } });
}
