// Conditional requests of the REST door (RFC 9110 §13): strong ETags of single resources (their row version),
// `If-None-Match` → 304 on reads, `If-Match` → the write's expectation (412 when unmet, 428 when required and absent),
// and the weak ETag of collection answers (a hash of the body). Written by hand: @fastify/etag hashes every body
// (a row version is cheaper and survives a change of serialization) and knows nothing of If-Match.
import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';
import type { Expectation } from '../services/preconditions.js';

/** The strong ETag of a row's representation: its version, quoted. */
export const etagOf = (version: number): string => `"${version}"`;

/** The entity-tags of an `If-Match` / `If-None-Match` value (`*` kept as is), each as `{ weak, opaque }`. */
function entityTags(header: string): { weak: boolean; opaque: string }[] | '*' {
  if (header.trim() === '*') return '*';
  const tags: { weak: boolean; opaque: string }[] = [];
  for (const match of header.matchAll(/(W\/)?("[^"]*")/g)) tags.push({ weak: match[1] !== undefined, opaque: match[2]! });
  return tags;
}

/**
 * Whether a read may answer 304 (RFC 9110 §13.1.2, weak comparison): `If-None-Match` lists the current ETag, or is `*`.
 * Only for GET and HEAD; absent or unparsable headers never match.
 */
export function notModified(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (!header || (request.method !== 'GET' && request.method !== 'HEAD')) return false;
  const tags = entityTags(header);
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
  return tags === '*' || tags.some((tag) => tag.opaque === opaque);
}

/**
 * What a write of one resource expects (`If-Match`, RFC 9110 §13.1.1, strong comparison): undefined without the
 * header; `exists` for `*`; else the versions named by strong tags of ours (a weak tag or a foreign one names none,
 * so it cannot match: 412). With REQUIRE_IF_MATCH, a write without the header is refused with 428 (RFC 6585).
 */
export function expectationOf(request: FastifyRequest): Expectation | undefined {
  const header = request.headers['if-match'];
  if (header === undefined) {
    if (request.server.config.requireIfMatch) {
      throw new AppError('PRECONDITION_REQUIRED', 'This server requires If-Match on writes: send the ETag of the resource you read');
    }
    return undefined;
  }
  const tags = entityTags(header);
  if (tags === '*') return 'exists';
  const versions = tags.filter((tag) => !tag.weak && /^"[1-9]\d{0,9}"$/.test(tag.opaque)).map((tag) => Number(tag.opaque.slice(1, -1)));
  return { versions };
}

/**
 * Route `onSend` of the collection reads: a weak ETag from the body (SHA-1, base64url: cheap next to the page's query)
 * and 304 without a body when `If-None-Match` names it. Weak: two answers with this tag are equivalent, not byte-equal
 * in every header.
 */
export function collectionEtag(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void): void {
  if (reply.statusCode !== 200 || typeof payload !== 'string' || reply.hasHeader('etag')) return done(null, payload);
  const etag = `W/"${hash('sha1', payload, 'base64url')}"`;
  reply.header('etag', etag);
  if (!notModified(request, etag)) return done(null, payload);
  reply.code(304);
  reply.removeHeader('content-type');
  done(null, null);
}

/** A single resource's read: 304 with its ETag when `If-None-Match` names it, else 200 with the body and the ETag. */
export function conditionalRead<Body>(request: FastifyRequest, version: number, body: () => Body) {
  const etag = etagOf(version);
  return notModified(request, etag)
    ? { status: 304 as const, headers: { etag }, body: undefined }
    : { status: 200 as const, headers: { etag }, body: body() };
}
