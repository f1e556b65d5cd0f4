// The vendor media type of this API version (`application/vnd.api.v1+json`), and the `onSend` hook that labels an
// answer with it when the request's Accept prefers it (versioning itself, the URL rewrite, is plugins/versioning.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import Negotiator from 'negotiator';

export const CURRENT_VERSION = 1;
/** The media type of this version's answers, as the contract lists it beside application/json. */
export const CURRENT_MEDIA_TYPE = `application/vnd.api.v${CURRENT_VERSION}+json`;

/**
 * `onSend` of the contract's routes: a JSON answer is labelled `application/vnd.api.v1+json` when the request's Accept
 * prefers that to `application/json` (negotiator, as Express's `accepts`: quality, then specificity, then order), so
 * a client that asked for the vendor type gets the type it asked for. The body is the same; an Accept without a
 * vendor type costs one substring test.
 */
export function answerInVendorMediaType(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
): void {
  // The answer's type depends on Accept: shared caches must key on it (appended: CORS may have set `Vary: Origin`).
  const vary = reply.getHeader('vary');
  reply.header('vary', vary ? `${String(vary)}, Accept` : 'Accept');
  const accept = request.headers.accept?.toLowerCase();
  if (accept?.includes('vnd.api.') && String(reply.getHeader('content-type') ?? '').startsWith('application/json')) {
    // Parameters (`; charset=utf-8`) dropped, as the versioning above reads the type: negotiator would otherwise
    // require them on the offered type too. Quality values stay.
    const bare = accept.replace(/;\s*(?!q=)[^;,]*/g, '');
    const preferred = new Negotiator({ headers: { accept: bare } }).mediaType(['application/json', CURRENT_MEDIA_TYPE]);
    if (preferred === CURRENT_MEDIA_TYPE) reply.header('content-type', `${CURRENT_MEDIA_TYPE}; charset=utf-8`);
  }
  done(null, payload);
}
