// Conditional requests of the REST door (RFC 9110 §13): strong ETags of single resources (their row version; for a
// user, the version of the view its caller is shown), `If-None-Match` → 304 on reads, `If-Match` → the write's
// expectation (412 when unmet, 428 when required and absent), and the weak ETag of collection answers (a hash of the
// body). Written by hand: @fastify/etag hashes every body (a row version is cheaper and survives a change of
// serialization) and knows nothing of If-Match.
import { hash } from 'node:crypto';
import { varyByCaller } from '../http/vary.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';
import type { Expectation, Validator } from '../services/preconditions.js';

/**
 * The strong ETag of a representation (SPEC §0.1: it names the representation sent, so two views never share one): the
 * row version, quoted (`"3"`), for a resource with one view and for a user's public view; `"3-2"` for a user's view
 * that also shows the private fields (public fields at version 3, private ones at 2).
 */
export function etagOf(validator: number | Validator): string {
  if (typeof validator === 'number') return `"${validator}"`;
  return validator.privateVersion === undefined ? `"${validator.version}"` : `"${validator.version}-${validator.privateVersion}"`;
}

/**
 * The headers of an answer with one view of a user: its ETag, and what keeps the view to its callers (a type, not an
 * interface: a handler's headers are a `Record<string, string>`).
 */
export type ViewHeaders = { etag: string; 'cache-control'?: string };

/** The headers of the view of a resource whose representation depends on its caller (a user); `Vary` set on `reply`. */
export function viewHeaders(reply: FastifyReply, validator: Validator): ViewHeaders {
  varyByCaller(reply);
  const etag = etagOf(validator);
  // The private view is one person's: `private` keeps it out of shared caches (RFC 9111 §5.2.2.7) and lets that
  // person's own cache revalidate it. An authenticated caller's answer is stricter still, `no-store`
  // (plugins/security-headers.ts, which overrides this); what is left with `private` is the answer of a sign-up.
  return validator.privateVersion === undefined ? { etag } : { etag, 'cache-control': 'private' };
}

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

/** A strong tag of ours: a public view's `"3"`, or a private view's `"3-2"`. */
const OUR_TAG = /^"([1-9]\d{0,9})(?:-([1-9]\d{0,9}))?"$/;

/**
 * What a write of one resource expects (`If-Match`, RFC 9110 §13.1.1, strong comparison): undefined without the
 * header; `exists` for `*`; else the validators named by strong tags of ours for the view the caller is shown
 * (`privateView`: a user's own, an ADMIN's or a service's view of a user). A weak tag, a foreign one or another view's
 * names none, so it cannot match: 412, as the current representation for this caller has another ETag. With
 * REQUIRE_IF_MATCH, a write without the header is refused with 428 (RFC 6585).
 */
export function expectationOf(request: FastifyRequest, privateView = false): Expectation | undefined {
  const header = request.headers['if-match'];
  if (header === undefined) {
    if (request.server.config.requireIfMatch) {
      throw new AppError('PRECONDITION_REQUIRED', 'This server requires If-Match on writes: send the ETag of the resource you read');
    }
    return undefined;
  }
  const tags = entityTags(header);
  if (tags === '*') return 'exists';
  const named = tags.flatMap((tag) => {
    const match = tag.weak ? null : OUR_TAG.exec(tag.opaque);
    return match ? [{ version: Number(match[1]), privateVersion: match[2] === undefined ? undefined : Number(match[2]) }] : [];
  });
  if (!privateView) return { versions: named.flatMap((tag) => (tag.privateVersion === undefined ? [tag.version] : [])) };
  return {
    privateViews: named.flatMap((tag) => (tag.privateVersion === undefined ? [] : [{ version: tag.version, privateVersion: tag.privateVersion }])),
  };
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

/**
 * A single resource's read: 304 with its ETag when `If-None-Match` names it, else 200 with the body and the ETag. A
 * `version` is a resource with one view; `ViewHeaders`, the view of a user its caller is shown (on the 304 too: RFC
 * 9110 §15.4.5 wants the headers the 200 would have carried).
 */
export function conditionalRead<Body>(request: FastifyRequest, validator: number | ViewHeaders, body: () => Body) {
  const headers = typeof validator === 'number' ? { etag: etagOf(validator) } : validator;
  return notModified(request, headers.etag) ? { status: 304 as const, headers, body: undefined } : { status: 200 as const, headers, body: body() };
}
