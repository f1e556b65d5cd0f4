// The common GraphQL request (POST, one JSON operation, a query or mutation) run through Yoga's enveloped functions and
// answered by Yoga's own result processor, skipping its WHATWG request/response layer; anything else goes to Yoga.
//
// Why: for a small query, Yoga's fetch-API adaptation (a Request built from Node's, its body re-read, the plugin
// chain of request hooks, a Response piped back) cost more than executing it (measured −22.5 % CPU per request on
// `user(id)`, docs/performance.md). The envelop functions are the same ones Yoga and the WebSocket door
// use, so every envelop plugin (graphql-armor limits, the work budget, masked errors, @auth) applies unchanged; the
// status code, content type and body come from Yoga's exported `processRegularResult`. Whatever this path does not
// reproduce exactly (GET, batches, other content types, an Accept served by SSE or multipart, extensions other than a
// persisted document's hash, a hash or text the persisted documents refuse, documents that do not parse or validate,
// subscriptions) is declined before anything runs, and Yoga's handler answers it as before. Written by hand: Yoga offers no public "handle parsed params" entry point.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { getOperationAST, GraphQLError, type DocumentNode } from 'graphql';
import type { LRUCache } from 'lru-cache';
import { createGraphQLError, processRegularResult } from 'graphql-yoga';
import type { AnyYoga } from '../schema/context.js';
import { COMPILABLE_REQUEST } from './compiled-execution.js';
import type { PersistedDocuments } from '../guards/persisted-documents.js';

const REGULAR_MEDIA_TYPES = ['application/graphql-response+json', 'application/json'] as const;
type RegularMediaType = (typeof REGULAR_MEDIA_TYPES)[number];

/**
 * The media type Yoga's result processors pick for a single, non-streamed result (useResultProcessors: the regular
 * processor is tried last, so its last match over the Accept entries wins), or undefined when Yoga would pick none of
 * the regular ones (only SSE or multipart acceptable, a charset other than utf-8, nothing acceptable).
 */
export function regularMediaType(accept: string | undefined): RegularMediaType | undefined {
  const asked = (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',');
  let chosen: RegularMediaType | undefined;
  for (let i = asked.length - 1; i >= 0; i--) {
    const [mediaType = '', ...params] = asked[i]!.split(';');
    const charset = params.find((param) => param.includes('charset=')) ?? 'charset=utf-8';
    if (charset !== 'charset=utf-8') continue;
    const [askedType, askedSubtype] = mediaType.split('/');
    for (const candidate of REGULAR_MEDIA_TYPES) {
      const [type, subtype] = candidate.split('/');
      if ((askedType === '*' || askedType === type) && (askedSubtype === '*' || askedSubtype === subtype)) chosen = candidate;
    }
  }
  return chosen;
}

/**
 * regularMediaType of the Accept headers seen, for the next request with the same one (clients send the same header
 * on every request; parsing it was ~1 % of a small query's CPU). Bounded: an attacker varying the header only fills
 * it, and then it is cleared and refilled.
 */
const MEDIA_TYPES_KEPT = 64;
// bound: MEDIA_TYPES_KEPT headers of at most 256 characters, cleared when full
const mediaTypeOfAccept = new Map<string | undefined, RegularMediaType | undefined>();
function cachedRegularMediaType(accept: string | undefined): RegularMediaType | undefined {
  if (mediaTypeOfAccept.has(accept)) return mediaTypeOfAccept.get(accept);
  const chosen = regularMediaType(accept);
  if (mediaTypeOfAccept.size >= MEDIA_TYPES_KEPT) mediaTypeOfAccept.clear();
  if (accept === undefined || accept.length <= 256) mediaTypeOfAccept.set(accept, chosen);
  return chosen;
}

/**
 * The Content-Types Yoga's POST JSON parser takes (`application/json`, optionally with parameters: case-sensitive, no
 * space before `;`); any other spelling goes to Yoga, which answers it as it always has (e.g. 415).
 */
const isYogaJsonContentType = (type: string | undefined) => type === 'application/json' || (type?.startsWith('application/json;') ?? false);

interface SimpleParams {
  query: string;
  variables?: Record<string, unknown> | undefined;
  operationName?: string | undefined;
}

const PARAM_KEYS = new Set(['query', 'variables', 'operationName', 'documentId', 'extensions']);
const isGraphQLError = (error: unknown): error is GraphQLError => error instanceof GraphQLError;
const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The body's GraphQL parameters when it is one operation of the plain shape, its document a text or a persisted
 * document's hash that `persisted` resolves (extensions other than APQ's, an unknown hash, a text refused in allow-list
 * mode: Yoga and its plugins answer those).
 */
function simpleParams(body: unknown, persisted: PersistedDocuments): SimpleParams | undefined {
  if (!isPlainObject(body)) return undefined;
  for (const key in body) if (!PARAM_KEYS.has(key)) return undefined;
  const { variables, operationName, extensions } = body;
  if (extensions != null && !(isPlainObject(extensions) && Object.keys(extensions).every((key) => key === 'persistedQuery'))) return undefined;
  if (variables != null && !isPlainObject(variables)) return undefined;
  if (operationName != null && typeof operationName !== 'string') return undefined;
  const document = persisted.resolve(body);
  if (!document || isGraphQLError(document)) return undefined;
  return { query: document.query, variables: variables ?? undefined, operationName: operationName ?? undefined };
}

/** A result with data and neither errors nor extensions (anything else goes through Yoga's result processor). */
function isPlainSuccess(result: unknown): result is { data: unknown } {
  if (!isPlainObject(result) || !('data' in result) || 'extensions' in result || 'stringify' in result) return false;
  const { errors } = result as { errors?: unknown };
  return errors === undefined;
}

type Enveloped = ReturnType<AnyYoga['getEnveloped']>;

/**
 * Parses and validates through the envelop (every plugin's parse and validate hooks): the document when its operation
 * is a query or mutation; undefined when Yoga answers it.
 */
function prepare(enveloped: Enveloped, params: SimpleParams): DocumentNode | undefined {
  let document: DocumentNode;
  try {
    document = enveloped.parse(params.query);
    // graphql-armor's limits throw from validation (QUERY_TOO_COMPLEX); other rules return their errors.
    if (enveloped.validate(enveloped.schema, document).length > 0) return undefined;
  } catch {
    return undefined; // Yoga reports it (parse and validation results are cached, so this costs a lookup)
  }
  const operation = getOperationAST(document, params.operationName);
  if (!operation || operation.operation === 'subscription') return undefined;
  return document;
}

/**
 * The documents this path has prepared, by text and operation name, so that a document sent again runs at once. Yoga
 * caches parse and validation results too, but reaching its cache goes through every plugin's parse and validate
 * hooks (closures per request, the rule names joined into its key): a quarter of the GraphQL engine's CPU on
 * `user(id)` (`pnpm bench:profile`, docs/benchmarks.md). Sound because nothing in those hooks depends on the request:
 * the same text parses to the same document under the same limits (armor's, nesting.ts), and validation rules are
 * the same for every request (Yoga's own validation cache assumes it too). Tracing's hooks do depend on it (a span
 * per parse and validate): with traces on, this memo is not used. A document that failed is not kept: Yoga answers it.
 */
export class PreparedDocuments {
  /** Bounded in bytes and by age, and keeps no long text (bounds/document-cache.ts). */
  constructor(readonly cache: LRUCache<string, Map<string | undefined, DocumentNode>>) {}

  of(enveloped: Enveloped, params: SimpleParams): DocumentNode | undefined {
    const byName = this.cache.get(params.query);
    const known = byName?.get(params.operationName);
    if (known) return known;
    const document = prepare(enveloped, params);
    // Operation names a client sends for one text are few; an attacker varying them only fills this text's map, bounded.
    if (document && (byName?.size ?? 0) < 16) {
      if (byName) byName.set(params.operationName, document);
      else this.cache.set(params.query, new Map([[params.operationName, document]]));
    }
    return document;
  }
}

/** True when the request was answered; false when nothing ran and Yoga's handler must answer it. */
export type FastPath = (req: FastifyRequest, reply: FastifyReply) => Promise<boolean>;

/** Answers `req` on the fast path, or declines (false) before anything runs. */
export function graphqlFastPath(
  // Any server context (the route passes Fastify's request and reply, as to Yoga's handler).
  yoga: AnyYoga,
  /** Yoga's `maskedErrors.maskError` with its message and isDev applied, as its handler calls it. */
  options: {
    maskError: (error: unknown) => Error;
    persisted: PersistedDocuments;
    /** Documents prepared before (undefined with traces on: every request runs the parse and validate hooks). */
    prepared?: PreparedDocuments | undefined;
  },
): FastPath {
  return async (req, reply) => {
    if (req.method !== 'POST' || !isYogaJsonContentType(req.headers['content-type'])) return false;
    const params = simpleParams(req.body, options.persisted);
    const mediaType = params && cachedRegularMediaType(req.headers.accept);
    if (!params || !mediaType) return false;
    // Incremental delivery (@defer, @stream) answers in parts, which only Yoga's result processors write: its handler
    // picks multipart or SSE by the Accept, or refuses (406) one that takes neither. A word in a comment or a string
    // sends a plain query there too, which answers it the same.
    if (params.query.includes('@defer') || params.query.includes('@stream')) return false;
    // Yoga's own envelop plugins look for the request and params in the context (e.g. a parse error becomes a 400
    // GRAPHQL_PARSE_FAILED only for an HTTP request, and that error is cached for the same text): the same context
    // Yoga gives them, with Fastify's request, whose `method` is what they read.
    const enveloped = yoga.getEnveloped({ req, reply, request: req, params });
    const document = options.prepared ? options.prepared.of(enveloped, params) : prepare(enveloped, params);
    if (!document) return false;
    const contextValue: Record<PropertyKey, unknown> = await enveloped.contextFactory();
    // One operation with the request's work budget to itself: the compiled executor may run it (compiled-execution.ts).
    contextValue[COMPILABLE_REQUEST] = true;
    let result: unknown;
    try {
      result = await enveloped.execute({
        schema: enveloped.schema,
        document,
        contextValue,
        variableValues: params.variables,
        operationName: params.operationName,
      });
    } catch (error) {
      // Execution reports resolver errors in the result; a throw comes from a plugin before or around it (e.g. the cost
      // check meeting an invalid `@include(if: null)`). Yoga's handler passes it through its error masking and answers
      // that one error (graphql-yoga's handleError): the same here, logged only when masking replaced it.
      const masked = options.maskError(error);
      if (masked !== error) req.log.error({ err: error }, 'GraphQL execution failed');
      result = { errors: [isGraphQLError(masked) ? masked : createGraphQLError(masked.message, { originalError: masked })] };
    }
    if (isPlainSuccess(result)) {
      // What processRegularResult answers for it (200, the media type with utf-8, the result as JSON), without a
      // fetch-API Response to build and read back.
      reply.status(200).header('content-type', `${mediaType}; charset=utf-8`).send(JSON.stringify(result));
      return true;
    }
    const response = await processRegularResult(result as Parameters<typeof processRegularResult>[0], yoga.fetchAPI, mediaType);
    response.headers.forEach((value, key) => void reply.header(key, value));
    // A boolean, not the reply: a FastifyReply is thenable, so an async function returning it resolves to undefined.
    reply.status(response.status).send(await response.text());
    return true;
  };
}
