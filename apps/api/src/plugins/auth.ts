// Authentication plugin: cookies, raw bodies (for signatures), JWT namespaces, and the hook that sets request.principal
// (through the identity module the composition root, plugins/domain.ts, built).
import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import getRawBody from 'raw-body';
import { authenticate } from '../auth/authenticate.js';
import { registerJwt } from '../auth/credentials/jwt.js';
import { anonymous, type Principal } from '../auth/principal.js';
import { isSignedRequest } from '../auth/credentials/signature.js';
import { settleHook } from './settle-hook.js';
import { AppError } from '../errors/app-error.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * POST /login (SPEC §3.3): a credential presented with it that does not verify is not answered before the attempt
     * is counted; the request goes on anonymous, marked, and the login answers it as a wrong password.
     */
    credentialsCountAsLoginFailure?: boolean;
  }
  interface FastifyRequest {
    principal: Principal;
    /** Set when a presented credential did not verify on a route that answers it itself (credentialsCountAsLoginFailure). */
    refusedCredential?: boolean;
    /** The body's bytes as sent, for a signed request only (the signature covers them). */
    rawBody?: Buffer;
  }
}

async function authPlugin(app: FastifyInstance): Promise<void> {
  const { secrets } = app.config;
  await app.register(cookie, { secret: secrets.session });
  // Signed requests hash the body bytes exactly as sent: read from the socket beside Fastify's own parser (as
  // fastify-raw-body's runFirst mode does), for signed requests only. By hand: fastify-raw-body buffers a second copy
  // of every body, signed or not, and has no per-request condition (the signature is in the query string).
  app.addHook('preParsing', (request, _reply, payload, done) => {
    if (request.method !== 'GET' && request.url.includes('?') && isSignedRequest(request.url)) {
      // A body over the limit or cut short fails Fastify's own read too, which answers it; rawBody then stays unset.
      getRawBody(request.raw, { length: null, limit: request.routeOptions.bodyLimit }, (error, body) => {
        if (!error) request.rawBody = body;
      });
    }
    done(null, payload);
  });
  await registerJwt(app, secrets);

  const { identity } = app;

  app.decorateRequest('principal', null as never); // set per request by the onRequest hook below
  app.addHook('onRequest', (request, _reply, done) => {
    request.principal = anonymous;
    done();
  });
  // After body parsing (the signature covers the body), before contract validation (anonymous callers learn nothing).
  // Callback form: an anonymous request (most reads) is resolved without a promise.
  app.addHook('preValidation', (request, _reply, done) => {
    const answeredByRoute = request.routeOptions.config?.credentialsCountAsLoginFailure === true;
    const refused = (error: unknown): Principal => {
      if (!answeredByRoute || !(error instanceof AppError)) throw error;
      request.refusedCredential = true;
      return anonymous;
    };
    let principal: ReturnType<typeof authenticate>;
    try {
      principal = authenticate(request, identity, app.db);
      if (principal instanceof Promise) principal = principal.catch(refused);
    } catch (error) {
      try {
        principal = refused(error);
      } catch {
        return done(error as Error);
      }
    }
    settleHook(
      principal,
      (resolved) => {
        request.principal = resolved;
        return undefined;
      },
      done,
      'authentication failed',
    );
  });
}

export default fp(authPlugin, { name: 'auth', dependencies: ['database', 'domain'] });
