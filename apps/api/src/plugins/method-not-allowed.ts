// 405 with `Allow` for a method a known path does not define (RFC 9110 §15.5.6, SPEC §0.3), before any hook spends
// work on it (authentication, budgets); an unknown path stays 404. The paths are the routes Fastify registered.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors/app-error.js';
import { errorBody } from '../rest/error-envelope.js';

/** A route's URL as a matcher of request paths: `:param` one segment, `*` the rest. */
function pathMatcher(url: string): RegExp {
  const source = url
    .split(/(:[A-Za-z0-9_]+|\*)/)
    .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}/?$`);
}

/** Answers 405 for a request that found no route when its path has routes under other methods (OPTIONS keeps its answer). */
export function answerMethodNotAllowed(app: FastifyInstance): void {
  let paths: { matches: RegExp; methods: Set<string> }[] | undefined;
  const allowedFor = (path: string): string[] | undefined => {
    if (!paths) {
      const byUrl = new Map<string, Set<string>>(); // bound: the routes registered at start
      for (const { url, method } of app.routeTable) byUrl.set(url, (byUrl.get(url) ?? new Set()).add(method));
      paths = [...byUrl].map(([url, methods]) => ({ matches: pathMatcher(url), methods }));
    }
    const methods = new Set<string>();
    for (const known of paths) if (known.matches.test(path)) for (const method of known.methods) methods.add(method);
    return methods.size > 0 ? [...methods].sort() : undefined;
  };
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.is404 || request.method === 'OPTIONS') return done();
    const path = request.url.split('?')[0]!;
    const allowed = allowedFor(path);
    if (!allowed) return done();
    const refusal = new AppError('METHOD_NOT_ALLOWED', `${request.method} is not defined for ${path}; allowed: ${allowed.join(', ')}`);
    reply.status(405).header('allow', allowed.join(', ')).send(errorBody(refusal));
  });
}
