// Security headers (helmet, built once) on every response, and CORS (@fastify/cors) for the origins in CORS_ORIGINS only.
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
// helmet itself, not @fastify/helmet: that plugin calls `helmet(options)` again on every request, which rebuilds each
// middleware and re-parses the CSP directives, the largest avoidable cost in a CPU profile of the read scenarios
// (`pnpm bench:profile`, docs/benchmarks.md). Its headers are recorded once here instead (helmetHeaders).
import helmet from 'helmet';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Helmet's default policy (self-hosted scripts, inline styles, data: images) is what Swagger UI at /docs needs.
 * No upgrade-insecure-requests: behind plain HTTP (local runs, tests) it would send the docs' requests to https.
 */
const HELMET_OPTIONS = { contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } };

/**
 * GraphiQL (GET /graphql from a browser) is a page whose scripts, style and workers the product serves itself
 * (graphql/transports/graphiql.ts, no CDN, no inline script). It gets this policy instead of the strict default: styles that
 * GraphiQL and Monaco set inline, its data: favicon and fonts, and the WebSocket it subscribes over; no other host.
 */
export const GRAPHIQL_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self' ws: wss:",
  "worker-src 'self'",
  "base-uri 'self'",
  "object-src 'none'",
  "frame-ancestors 'self'",
].join('; ');

/** Routes whose answers carry tokens in the body. */
const CREDENTIAL_ROUTES = new Set(['/login', '/auth/refresh', '/api/v1/api-keys']);

/**
 * The headers helmet's middleware writes, recorded once: with these options none depends on the request (helmet
 * precomputes even the CSP string), so each request gets the same list without running helmet's thirteen middlewares
 * and their `next` closures again. A middleware that touched anything but setHeader/removeHeader would throw here, at
 * start, instead of being silently skipped.
 */
function helmetHeaders(options: object): Record<string, string> {
  // bound: the configured headers, built at start
  const headers = new Map<string, string>();
  const recorder = new Proxy({} as ServerResponse, {
    get(_target, property) {
      if (property === 'setHeader') return (name: string, value: string) => void headers.set(name, value);
      if (property === 'removeHeader') return (name: string) => void headers.delete(name);
      throw new Error(`helmet read res.${String(property)}: its headers depend on the response; record them per request`);
    },
  });
  let failure: unknown;
  helmet(options)({} as IncomingMessage, recorder, (error) => (failure = error));
  if (failure) throw failure;
  return Object.fromEntries([...headers].map(([name, value]) => [name.toLowerCase(), value]));
}

async function securityHeadersPlugin(app: FastifyInstance): Promise<void> {
  // What @fastify/helmet's global mode does (helmet's headers set in onRequest, so they are on every response, errors,
  // 404s and streams included), with helmet run once at start instead of on every request, and the headers given to
  // Fastify's reply rather than the raw response: Node then writes every header in one pass (a header set on the raw
  // response first makes writeHead set each of Fastify's again, one by one).
  const headers = helmetHeaders(HELMET_OPTIONS);
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    const type = reply.getHeader('content-type');
    if (request.routeOptions.url === '/graphql' && typeof type === 'string' && type.startsWith('text/html')) {
      reply.header('content-security-policy', GRAPHIQL_CSP);
    }
    // An answer for an authenticated caller is theirs alone: no shared or browser cache may keep it (RFC 9111 §5.2.2.5).
    // (`principal` is set by the auth plugin; requests refused before it ran are anonymous or have none.)
    // So is an answer that hands out credentials (tokens of /login and /auth/refresh, a session cookie).
    const authenticated = request.principal !== undefined && request.principal !== null && request.principal.kind !== 'anonymous';
    if (authenticated || CREDENTIAL_ROUTES.has(request.routeOptions.url ?? '') || reply.hasHeader('set-cookie'))
      reply.header('cache-control', 'no-store');
    done(null, payload);
  });

  const origins = app.config.corsOrigins;
  if (origins.length > 0) {
    // Credentials (the session cookie) are allowed, so origins are listed, never `*`. An unlisted origin gets no CORS
    // header at all (the plugin's static options would still send `access-control-allow-credentials` to it).
    const allowed = new Set(origins);
    await app.register(cors, {
      delegator: (request, callback) => {
        const { origin } = request.headers;
        callback(null, origin && allowed.has(origin) ? { origin: true, credentials: true, maxAge: 600 } : { origin: false });
      },
    });
  }
}

export default fp(securityHeadersPlugin, { name: 'security-headers' });
