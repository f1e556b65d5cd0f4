// Registers every REST operation of openapi.yaml (validation and serialization from the contract) with its handler.
import type { OperationHandler, OperationId } from '@users-posts/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import openapiGlue from 'fastify-openapi-glue';
import type { RestContext } from './context.js';
import { openapiDocument } from '../contract/openapi-contract.js';
import { operationHandlers } from './operations.js';
import { collectionEtag } from './conditional.js';
import { IDEMPOTENCY_HEADER, idempotencyHooks } from './idempotency.js';
import { DatabaseIdempotencyStore } from '../shared-state/idempotency/database.js';
import { checkBody, operationBodies, type BodyRule } from './request-body.js';
import { markValidated } from '../services/validation.js';
import { enforce, operationRequirements } from './requirements.js';
import { routeOptions } from './route-options.js';
import { createValidatorCompiler } from './validator-compiler.js';
import { answerInVendorMediaType, CURRENT_MEDIA_TYPE } from './media-type.js';
import { deprecationHooks } from './deprecation.js';

type AnyHandler = OperationHandler<OperationId, RestContext>;

function routeHandler(app: FastifyInstance, handler: AnyHandler, body: BodyRule | undefined) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    // The route validated the body against the contract's input schema: the service does not validate it again.
    if (body?.schema) markValidated(request.body, body.schema);
    const input = { params: request.params, query: request.query, body: request.body } as Parameters<AnyHandler>[0];
    const result = await handler(input, { services: app.services, request, reply });
    if (result.headers) reply.headers(result.headers);
    reply.status(result.status);
    return result.body === undefined ? reply.send() : result.body;
  };
}

/** glue merges these over the route it built from the contract (its typing asks for a whole RouteOptions). */
const partialRoute = (options: Partial<RouteOptions>) => options as unknown as RouteOptions;

/**
 * The contract as glue reads it: answers in application/json only. The vendor media type the contract lists beside
 * it is the same body, labelled after serialization (versioning.ts `answerInVendorMediaType`); given to glue it would
 * also be taken for a request media type without a parser (a start-up warning).
 */
function withoutVendorMediaType(document: ReturnType<typeof openapiDocument>) {
  type Responses = Record<string, { content?: Record<string, unknown> }>;
  const strip = (responses: Responses | undefined) =>
    Object.values(responses ?? {}).forEach((response) => delete response.content?.[CURRENT_MEDIA_TYPE]);
  const components = (document as { components?: { responses?: Responses } }).components;
  strip(components?.responses);
  for (const item of Object.values(document.paths))
    for (const operation of Object.values(item) as { responses?: Responses }[]) strip(operation?.responses);
  return document;
}

/**
 * The reads whose 200 the contract declares with an `ETag`: the handler sets a strong one for a single resource
 * (conditional.ts `conditionalRead`), and `collectionEtag` a weak one for a collection (it leaves a set one alone).
 */
function etaggedReads(document: ReturnType<typeof openapiDocument>): Set<string> {
  type Operation = { operationId?: string; responses?: Record<string, { headers?: Record<string, unknown>; $ref?: string }> };
  const responses = (document as { components?: { responses?: Record<string, { headers?: Record<string, unknown> }> } }).components?.responses ?? {};
  // bound: operations of openapi.yaml, built at start
  const reads = new Set<string>();
  for (const item of Object.values(document.paths)) {
    const get = (item as { get?: Operation }).get;
    const ok = get?.responses?.['200'];
    const declared = ok?.$ref ? responses[ok.$ref.split('/').pop()!] : ok;
    if (get?.operationId && declared?.headers?.ETag) reads.add(get.operationId);
  }
  return reads;
}

/** The writes whose contract declares the `Idempotency-Key` header (rest/idempotency.ts). */
function idempotentWrites(document: ReturnType<typeof openapiDocument>): Set<string> {
  type Parameter = { name?: string; in?: string; $ref?: string };
  const components = (document as { components?: { parameters?: Record<string, Parameter> } }).components?.parameters ?? {};
  const resolve = (parameter: Parameter) => (parameter.$ref ? components[parameter.$ref.split('/').pop()!] : parameter);
  // bound: operations of openapi.yaml, built at start
  const writes = new Set<string>();
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item) as { operationId?: string; parameters?: Parameter[] }[]) {
      const declares = operation?.parameters?.some((parameter) => {
        const resolved = resolve(parameter);
        return resolved?.in === 'header' && resolved.name?.toLowerCase() === IDEMPOTENCY_HEADER;
      });
      if (operation?.operationId && declares) writes.add(operation.operationId);
    }
  }
  return writes;
}

async function restPlugin(app: FastifyInstance): Promise<void> {
  const specification = withoutVendorMediaType(openapiDocument());
  const requirements = operationRequirements(specification);
  const collectionReads = etaggedReads(specification);
  const keyedWrites = idempotentWrites(specification);
  const idempotencyStore = new DatabaseIdempotencyStore(app.db.prisma, app.config.storeBounds.idempotencyKeysPerClient);
  const idempotency = idempotencyHooks({ store: idempotencyStore, secret: app.config.secrets.session, ttlSeconds: app.config.idempotencyTtlSeconds });
  // Expired records are also skipped and replaced when met; every instance sweeps the rest hourly.
  const purge = setInterval(() => void idempotencyStore.purgeExpired(Date.now()).catch(() => undefined), 3_600_000).unref();
  app.addHook('onClose', async () => clearInterval(purge));
  app.stores.declare({
    name: 'idempotency-records',
    home: 'database',
    scope: 'owner',
    maxEntries: app.config.storeBounds.idempotencyKeysPerClient,
    ttlMs: app.config.idempotencyTtlSeconds * 1000,
    perClient:
      'an authenticated client (user, or the signing service) keeps at most IDEMPOTENCY_KEYS_MAX_PER_CLIENT keys; anonymous callers keep none',
    atBound: "a new key forgets the client's oldest record (its replay is then run as a new request)",
    config: ['IDEMPOTENCY_KEYS_MAX_PER_CLIENT', 'IDEMPOTENCY_TTL_SECONDS'],
    size: async () => {
      const rows = await app.db.prisma.$queryRaw<
        { n: bigint | null }[]
      >`SELECT max(n) AS n FROM (SELECT count(*) AS n FROM idempotency_records GROUP BY scope) AS o`;
      return { entries: Number(rows[0]?.n ?? 0) };
    },
  });
  const bodies = operationBodies(specification);
  // Deprecated operations and parameters answer with Deprecation, Sunset and a Link to the changelog (SPEC §6).
  const withDeprecation = deprecationHooks(specification, `${app.config.mail.publicUrl}/docs/changelog`, app.config.contractUsage.deprecations);
  app.setValidatorCompiler(createValidatorCompiler());
  await app.register(openapiGlue, {
    specification,
    operationResolver: (operationId: string) => {
      const handler = operationHandlers[operationId as OperationId] as AnyHandler | undefined;
      // Who may call runs before contract validation: a caller without the right learns nothing about the input rules.
      const requirement = requirements.get(operationId);
      const body = bodies.get(operationId);
      const declared = routeOptions(app)[operationId as OperationId];
      const options = {
        ...declared,
        // A body no valid input can be as long as is refused (413) before it is read (request-body.ts); else the app's 1 MiB.
        ...(body?.bodyLimit !== undefined && body.bodyLimit < 1024 * 1024 ? { bodyLimit: body.bodyLimit } : {}),
        // The operation's name where a request's handling is reported (plugins/tracing.ts names its span so).
        // Whether it needs a credential: the limiter counts its stricter buckets only for a caller that has one.
        config: { ...declared?.config, operationId, needsCredential: requirement?.authenticated === true || requirement?.role !== undefined },
        // Callback form: nothing here waits, so no promise per request.
        preValidation: (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
          try {
            enforce(requirement, request.principal);
            checkBody(body, request);
          } catch (error) {
            return done(error as Error);
          }
          done();
        },
        ...(keyedWrites.has(operationId)
          ? { preHandler: idempotency.claim, onSend: [answerInVendorMediaType, idempotency.record] }
          : { onSend: collectionReads.has(operationId) ? [collectionEtag, answerInVendorMediaType] : answerInVendorMediaType }),
      };
      // An operation of the contract without a handler is a build error, not a route that fails at request time.
      if (!handler) throw new Error(`openapi.yaml operation "${operationId}" has no handler in rest/operations.ts`);
      return partialRoute({ ...withDeprecation(operationId, options), handler: routeHandler(app, handler, body) });
    },
  });
}

export default fp(restPlugin, { name: 'rest', dependencies: ['database', 'error-handler', 'auth', 'rate-limit'] });
