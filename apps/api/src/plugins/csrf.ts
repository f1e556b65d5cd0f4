// Cross-site request forgery: refuses cookie-authenticated state-changing requests sent from another site.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors/app-error.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether `origin` is this server (same host and port as the request's Host) or one of CORS_ORIGINS. */
function trustedOrigin(request: FastifyRequest, origin: string, allowed: Set<string>): boolean {
  if (allowed.has(origin)) return true;
  try {
    // The host alone, not the scheme: behind a TLS-terminating proxy without TRUST_PROXY the request looks like http.
    return new URL(origin).host === request.headers.host?.toLowerCase();
  } catch {
    return false; // `null` (sandboxed frames, file:) and garbage: not this server
  }
}

/**
 * The browser attaches the session cookie to any site's form posts and fetches (SameSite=Lax still lets top-level
 * POST navigations through in some browsers, and subdomains are "same site"): a state-changing request authenticated
 * by that cookie must come from this server's own pages or a CORS_ORIGINS one. Browsers send `Origin` on every
 * non-GET request; without one, `Sec-Fetch-Site: cross-site` still tells a foreign page. Bearer tokens, API keys and
 * signatures are not ambient (a page cannot make the browser attach them), so those requests are not checked.
 */
async function csrfPlugin(app: FastifyInstance): Promise<void> {
  const allowed = new Set(app.config.corsOrigins);
  // Registered after the auth plugin: its preValidation hook has resolved the principal by now.
  app.addHook('preValidation', (request, _reply, done) => {
    const principal = request.principal;
    if (SAFE_METHODS.has(request.method) || principal.kind !== 'user' || principal.via !== 'session') return done();
    const origin = request.headers.origin;
    const foreign = origin !== undefined ? !trustedOrigin(request, origin, allowed) : request.headers['sec-fetch-site'] === 'cross-site';
    done(
      foreign
        ? new AppError('FORBIDDEN', 'Cross-site request with the session cookie refused: send it from this site or with a Bearer token')
        : undefined,
    );
  });
}

export default fp(csrfPlugin, { name: 'csrf', dependencies: ['auth', 'error-handler'] });
