// Security headers (@fastify/helmet) on every response, and CORS (@fastify/cors) for the origins in CORS_ORIGINS only.
import cors from '@fastify/cors';
import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * GraphiQL (GET /graphql from a browser) is a page Yoga renders with inline scripts, assets from unpkg.com and
 * Monaco workers started from blob: URLs; it gets this policy instead of the strict default.
 */
export const GRAPHIQL_CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline' https://unpkg.com",
  "style-src 'self' 'unsafe-inline' https://unpkg.com",
  "img-src 'self' data: https:",
  "font-src 'self' data: https://unpkg.com",
  "connect-src 'self' ws: wss: https://unpkg.com",
  "worker-src 'self' blob:",
  "base-uri 'self'",
  "object-src 'none'",
  "frame-ancestors 'self'",
].join('; ');

async function securityHeadersPlugin(app: FastifyInstance): Promise<void> {
  await app.register(helmet, {
    global: true,
    // Helmet's default policy (self-hosted scripts, inline styles, data: images) is what Swagger UI at /docs needs.
    // No upgrade-insecure-requests: behind plain HTTP (local runs, tests) it would send the docs' requests to https.
    contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
  });
  app.addHook('onSend', async (request, reply, payload) => {
    const type = reply.getHeader('content-type');
    if (request.routeOptions.url === '/graphql' && typeof type === 'string' && type.startsWith('text/html')) {
      reply.header('content-security-policy', GRAPHIQL_CSP);
    }
    return payload;
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
