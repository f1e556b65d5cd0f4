// What a graphql-sse client must be told as an HTTP error rather than as stream data: a document that does not parse
// or validate, or that the persisted documents refuse (a hash not listed, a text in allow-list mode), is answered 400 with its errors as JSON before any stream opens (the protocol's distinct-connections
// mode: the client reports it through `sink.error`, not as a `next` event), and the single-connection mode's
// reservation (`PUT`) is refused with 405 naming what is served. Written by hand: Yoga streams such errors as events.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError, type DocumentNode } from 'graphql';
import type { AnyYoga } from '../schema/context.js';
import type { DocumentParams, PersistedDocuments } from '../guards/persisted-documents.js';
import { GraphQLOnlyCodes } from '../../errors/app-error.js';

const isGraphQLError = (error: unknown): error is GraphQLError => error instanceof GraphQLError;
const withCode = (error: GraphQLError, code: string) =>
  error.extensions.code
    ? error
    : new GraphQLError(error.message, {
        nodes: error.nodes,
        source: error.source,
        positions: error.positions,
        extensions: { ...error.extensions, code },
      });

/** The GraphQL parameters of a GET (query string) or a JSON POST, with the document they run (a text or a hash's). */
function paramsOf(req: FastifyRequest, persisted: PersistedDocuments): { query: string; operationName?: string } | GraphQLError | undefined {
  const body = (req.method === 'GET' ? parsedExtensions(req.query) : req.body) as (DocumentParams & { operationName?: unknown }) | undefined;
  // A batch is Yoga's to answer (its persisted-documents plugin judges each operation), as is a body that is no object.
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  // A POST may name its document in the URL (`?documentId=`), as Yoga's plugin reads it too.
  const urlDocumentId = (req.query as { documentId?: unknown } | undefined)?.documentId;
  const source = req.method !== 'GET' && body.documentId === undefined && urlDocumentId !== undefined ? { ...body, documentId: urlDocumentId } : body;
  const document = persisted.resolve(source);
  if (!document || document instanceof GraphQLError) return document;
  return { query: document.query, ...(typeof source.operationName === 'string' ? { operationName: source.operationName } : {}) };
}

/** A GET's `extensions` parameter is JSON text (APQ's persistedQuery travels in it); unparsable, it is left to Yoga. */
function parsedExtensions(query: unknown): unknown {
  const params = query as Record<string, unknown> | undefined;
  if (typeof params?.extensions !== 'string') return params;
  try {
    return { ...params, extensions: JSON.parse(params.extensions) };
  } catch {
    return { ...params, extensions: undefined };
  }
}

/**
 * For a request that asks for an event stream: the errors of its document (a hash not listed, a text refused by the
 * allow-list mode, a document that does not parse or validate), or undefined when it may run.
 */
export function sseDocumentErrors(
  yoga: AnyYoga,
  req: FastifyRequest,
  reply: FastifyReply,
  persisted: PersistedDocuments,
): GraphQLError[] | undefined {
  if (!req.headers.accept?.includes('text/event-stream')) return undefined;
  const params = paramsOf(req, persisted);
  if (!params) return undefined; // Yoga answers a request without a query itself (400)
  if (params instanceof GraphQLError) return [params];
  const enveloped = yoga.getEnveloped({ req, reply, request: req, params });
  let document: DocumentNode;
  try {
    document = enveloped.parse(params.query);
  } catch (error) {
    if (isGraphQLError(error)) return [withCode(error, GraphQLOnlyCodes.GRAPHQL_PARSE_FAILED)];
    throw error;
  }
  try {
    const errors = enveloped.validate(enveloped.schema, document);
    return errors.length > 0 ? errors.map((error: GraphQLError) => withCode(error, GraphQLOnlyCodes.GRAPHQL_VALIDATION_FAILED)) : undefined;
  } catch (error) {
    // graphql-armor's limits throw from validation (QUERY_TOO_COMPLEX)
    if (isGraphQLError(error)) return [withCode(error, GraphQLOnlyCodes.GRAPHQL_VALIDATION_FAILED)];
    throw error;
  }
}

/** An error as the answer's JSON shows it: Yoga's internal `extensions.http` (its status hint) left out, as Yoga does. */
export function errorForClient(error: GraphQLError): Record<string, unknown> {
  const { http: _http, ...extensions } = error.extensions as Record<string, unknown>;
  return { ...error.toJSON(), extensions };
}

export const SINGLE_CONNECTION_REFUSAL =
  "graphql-sse's single connection mode is not served: use its distinct connections mode (createClient({ singleConnection: false }), the default), or graphql-ws over a WebSocket";
