// Safe retries of the REST door's writes (draft-ietf-httpapi-idempotency-key-header, as Stripe does it): the first
// request with an `Idempotency-Key` runs and its answer (status, the headers a client needs, the body bytes) is kept
// in the database for IDEMPOTENCY_TTL_SECONDS with a fingerprint of the request; a retry with the same key and the
// same request gets that answer again without running (no second row, no second event); the same key with another
// request → 422; while the first still runs → 409. Keys belong to the caller (user, service or anonymous). Kept in
// the database so every instance sees them. Written by hand: no maintained Fastify plugin stores answers across
// instances (fastify-idempotency keeps them in one process's memory).
import type { Prisma, PrismaClient } from '@users-posts/db';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import { AppError } from '../errors.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** How long a first request may run before a retry may take its key over (it crashed, or its instance died). */
const RUN_LEASE_MS = 60_000;
/** The answer's headers a retry gets back with its body (rate-limit headers are the retry's own). */
const KEPT_HEADERS = ['content-type', 'location', 'etag'] as const;

const kRecord = Symbol('idempotencyRecord');
type KeyedRequest = FastifyRequest & { [kRecord]?: { scope: string; key: string } };

const scopeOf = (principal: Principal) => (principal.kind === 'user' ? `user:${principal.userId}` : principal.kind);

/** The request as a retry must repeat it: method, URL (path and query as sent) and the parsed body. */
function fingerprintOf(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`)
    .digest('base64url');
}

const isUniqueViolation = (error: unknown) => (error as { code?: unknown }).code === 'P2002';

/**
 * Route `preHandler` of the keyed operations (those whose contract declares the header): without a key, nothing
 * happens. With one: the first request claims it and runs; a retry of a finished one is answered from the record.
 */
export async function claimIdempotencyKey(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const key = request.headers[IDEMPOTENCY_HEADER];
  if (typeof key !== 'string') return undefined;
  const prisma = request.server.db.prisma;
  const scope = scopeOf(request.principal);
  const fingerprint = fingerprintOf(request);
  const ttlMs = request.server.config.idempotencyTtlSeconds * 1000;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const now = Date.now();
    try {
      await prisma.idempotencyRecord.create({
        data: { scope, key, fingerprint, lockedUntil: new Date(now + RUN_LEASE_MS), expiresAt: new Date(now + ttlMs) },
      });
      (request as KeyedRequest)[kRecord] = { scope, key };
      return undefined; // first: run
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
    const existing = await prisma.idempotencyRecord.findUnique({ where: { scope_key: { scope, key } } });
    if (!existing) continue; // expired and removed meanwhile: claim again
    if (existing.expiresAt.getTime() <= now) {
      await prisma.idempotencyRecord.deleteMany({ where: { scope, key, expiresAt: existing.expiresAt } });
      continue;
    }
    if (existing.fingerprint !== fingerprint) {
      throw new AppError('VALIDATION_FAILED', 'This Idempotency-Key was used for a different request: use a new key for a new request', [
        { field: 'Idempotency-Key', message: 'was used for a different request' },
      ]);
    }
    if (existing.status === null) {
      // Still running, unless its lease ran out (a crashed request): then this retry takes the key over.
      const takenOver =
        existing.lockedUntil.getTime() <= now &&
        (await prisma.idempotencyRecord.updateMany({ where: { scope, key, status: null, lockedUntil: existing.lockedUntil }, data: { lockedUntil: new Date(now + RUN_LEASE_MS) } })).count === 1;
      if (!takenOver) throw new AppError('CONFLICT', 'A request with this Idempotency-Key is still running: retry once it has answered');
      (request as KeyedRequest)[kRecord] = { scope, key };
      return undefined;
    }
    // A retry of a finished request: its answer again, byte for byte.
    reply.code(existing.status).headers({ ...(existing.headers as Record<string, string>), 'idempotent-replayed': 'true' });
    return reply.send(existing.body ?? undefined);
  }
  throw new AppError('CONFLICT', 'This Idempotency-Key is being claimed by another request: retry');
}

/**
 * Route `onSend` of the keyed operations, last: the claimed key's record gets the answer (status, kept headers, the
 * body as sent); a 5xx releases the key instead, so that a retry runs again. Written before the answer leaves, so a
 * retry that follows it finds it.
 */
export function recordIdempotentAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void): void {
  const claimed = (request as KeyedRequest)[kRecord];
  if (!claimed) return done(null, payload);
  (request as KeyedRequest)[kRecord] = undefined;
  const prisma: PrismaClient = request.server.db.prisma;
  const where = { scope_key: claimed };
  const stored =
    reply.statusCode >= 500
      ? prisma.idempotencyRecord.deleteMany({ where: claimed })
      : prisma.idempotencyRecord.update({
          where,
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
