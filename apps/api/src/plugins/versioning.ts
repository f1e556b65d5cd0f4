// API versioning of SPEC §4: `/api/v1` is canonical; the unversioned prefix `/api` reaches the same routes when it
// names no version, `?version=1` or `Accept: application/vnd.api.v1+json`. Done by rewriting the URL before routing
// (Fastify's `rewriteUrl`), so no route is registered twice and the contract lists each operation once.
// An unknown version: `/api/v9/...` is simply no route (404); in the query → 400 (40001 naming `version`); in the
// media type → 406 (40600). A version that conflicts with the path's (`/api/v1/users?version=2`, or `/api/v1/…` with
// `Accept: application/vnd.api.v2+json`) is refused the same way, not ignored. Those are noted on the raw request by
// the rewrite and thrown by an `onRequest` hook, so they answer in the error envelope like every failure.
// The answers of the contract's routes carry the vendor media type when the request's Accept prefers it
// (`answerInVendorMediaType` of rest/media-type.ts, registered on those routes by rest/plugin.ts).
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors/app-error.js';
import { CURRENT_VERSION } from '../rest/media-type.js';

const VERSIONED = /^\/api\/v\d+(?:\/|$)/;
const UNVERSIONED = /^\/api(?:\/|$)/;
const VENDOR_MEDIA_TYPE = /^application\/vnd\.api\.v([^+;\s]*)\+json$/i;

const kVersionError = Symbol('versionError');
type VersionedRequest = IncomingMessage & { [kVersionError]?: AppError };

/** The versions named by `application/vnd.api.v<N>+json` entries of an Accept header (none: no preference). */
function acceptedVersions(accept: string | string[] | undefined): string[] {
  const values = [accept ?? []].flat().join(',');
  const versions: string[] = [];
  for (const entry of values.split(',')) {
    const match = VENDOR_MEDIA_TYPE.exec(entry.split(';')[0]!.trim());
    if (match) versions.push(match[1]!);
  }
  return versions;
}

/**
 * Fastify `rewriteUrl`: `/api/<rest>` → `/api/v1/<rest>` (the `version` query parameter removed); versioned and
 * non-API URLs are left alone. An unsupported version is recorded on the request for the `onRequest` hook.
 */
export function rewriteUrl(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const queryStart = url.indexOf('?');
  const path = queryStart === -1 ? url : url.slice(0, queryStart);
  const current = path === `/api/v${CURRENT_VERSION}` || path.startsWith(`/api/v${CURRENT_VERSION}/`);
  if (!current && (VERSIONED.test(path) || !UNVERSIONED.test(path))) return url;

  // The query string is kept byte for byte (signed requests sign it), only `version=…` pairs are dropped.
  const pairs = queryStart === -1 ? [] : url.slice(queryStart + 1).split('&');
  const isVersion = (pair: string) => pair.split('=')[0] === 'version';
  const requested = pairs.filter(isVersion).map((pair) => new URLSearchParams(pair).get('version') ?? '');
  const request = req as VersionedRequest;
  if (current) {
    // The path names the version: a query or Accept version may only agree with it. The URL is left as sent.
    noteConflict(request, requested, acceptedVersions(req.headers.accept));
    return url;
  }
  if (requested.length > 0 && requested.some((version) => version !== String(CURRENT_VERSION))) {
    request[kVersionError] = new AppError('BAD_QUERY_PARAMETER', `Unsupported API version: ${requested.join(', ')}`, [
      { field: 'version', message: `must be ${CURRENT_VERSION}` },
    ]);
  } else {
    const media = acceptedVersions(req.headers.accept);
    if (media.length > 0 && !media.includes(String(CURRENT_VERSION))) {
      request[kVersionError] = new AppError(
        'NOT_ACCEPTABLE',
        `Unsupported API version in Accept: application/vnd.api.v${media[0]}+json (supported: application/vnd.api.v${CURRENT_VERSION}+json)`,
      );
    }
  }
  const search = pairs.filter((pair) => pair !== '' && !isVersion(pair)).join('&');
  return `/api/v${CURRENT_VERSION}${path.slice('/api'.length)}${search ? `?${search}` : ''}`;
}

/** On `/api/v<current>`: a `version` query parameter or an Accept vendor version naming another version is refused. */
function noteConflict(request: VersionedRequest, requested: string[], media: string[]): void {
  const other = requested.filter((version) => version !== String(CURRENT_VERSION));
  if (other.length > 0) {
    request[kVersionError] = new AppError('BAD_QUERY_PARAMETER', `The path is /api/v${CURRENT_VERSION} but version=${other.join(', ')} was asked`, [
      { field: 'version', message: `must be ${CURRENT_VERSION} (or left out) on /api/v${CURRENT_VERSION}` },
    ]);
  } else if (media.length > 0 && !media.includes(String(CURRENT_VERSION))) {
    request[kVersionError] = new AppError(
      'NOT_ACCEPTABLE',
      `The path is /api/v${CURRENT_VERSION} but Accept asks for application/vnd.api.v${media[0]}+json`,
    );
  }
}

async function versioningPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', (request, _reply, done) => done((request.raw as VersionedRequest)[kVersionError]));
}

export default fp(versioningPlugin, { name: 'versioning', dependencies: ['error-handler'] });
