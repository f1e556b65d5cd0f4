// Identity plugin: cookies, raw bodies (for signatures), JWT namespaces, and the hook that sets request.principal.
import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import rawBody from 'fastify-raw-body';
import { authenticate } from '../auth/authenticate.js';
import { systemClock, type Clock } from '../auth/clock.js';
import { Identity, type IdentityStores } from '../auth/identity.js';
import { registerJwt } from '../auth/jwt.js';
import { anonymous, type Principal } from '../auth/principal.js';

declare module 'fastify' {
  interface FastifyInstance {
    identity: Identity;
  }
  interface FastifyRequest {
    principal: Principal;
  }
}

export interface AuthPluginOptions {
  clock?: Clock | undefined;
  stores?: IdentityStores | undefined;
}

async function authPlugin(app: FastifyInstance, opts: AuthPluginOptions): Promise<void> {
  const { secrets } = app.config;
  await app.register(cookie, { secret: secrets.session });
  // Signed requests hash the body bytes exactly as sent.
  await app.register(rawBody, { field: 'rawBody', global: true, encoding: false, runFirst: true });
  await registerJwt(app, secrets);

  const stores = opts.stores ?? app.sharedState.stores;
  const identity = new Identity(app, app.db.prisma, opts.clock ?? systemClock, stores, secrets.signing);
  app.decorate('identity', identity);

  app.decorateRequest('principal', null as never); // set per request by the onRequest hook below
  app.addHook('onRequest', async (request) => {
    request.principal = anonymous;
  });
  // After body parsing (the signature covers the body), before contract validation (anonymous callers learn nothing).
  app.addHook('preValidation', async (request) => {
    request.principal = await authenticate(request, identity, app.db);
  });
}

export default fp(authPlugin, { name: 'auth', dependencies: ['database', 'shared-state'] });
