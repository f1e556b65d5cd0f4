// What selects an answer besides its URL, for shared caches: the caller's credentials, on both doors (a user's view
// on REST, GraphQL GET answers that show the caller's private fields).
import type { FastifyReply } from 'fastify';

/**
 * What selects a user's view besides the URL: the credentials of the request (a bearer token, the `sid` cookie; an
 * `api_key` or a signature is in the query, so already in every cache key). Named in `Vary` on both views: a shared
 * cache that stored the anonymous view must not hand it, or revalidate it, for a request that carries credentials.
 */
const VARY_BY_CALLER = ['Authorization', 'Cookie'];

/** Adds the credentials to `reply`'s `Vary`, keeping what is there (CORS's `Origin`; media-type.ts appends `Accept`). */
export function varyByCaller(reply: FastifyReply): void {
  const present = String(reply.getHeader('vary') ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const lower = new Set(present.map((name) => name.toLowerCase()));
  reply.header('vary', [...present, ...VARY_BY_CALLER.filter((name) => !lower.has(name.toLowerCase()))].join(', '));
}
