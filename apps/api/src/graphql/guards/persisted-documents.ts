// Trusted documents (persisted operations): the manifest of documents registered at build time, looked up by their
// SHA-256 hash on every door (HTTP through Yoga's persisted-operations plugin, WebSocket and SSE through `resolve`), and
// the allow-list mode (GRAPHQL_TRUSTED_DOCUMENTS_ONLY) that refuses any document sent as text.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { GraphQLError } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import type { PersistedDocumentsConfig } from '../../config/config.js';
import { GraphQLOnlyCodes } from '../../errors/app-error.js';

/** The `extensions.code` of each refusal, from the error table (errors/app-error.ts says whose codes they are). */
export const PERSISTED_DOCUMENT_CODES = {
  /** A hash the manifest does not list, when documents may also be sent as text. */
  notFound: GraphQLOnlyCodes.PERSISTED_QUERY_NOT_FOUND,
  /** A hash the manifest does not list, in allow-list mode. */
  notInList: GraphQLOnlyCodes.PERSISTED_QUERY_NOT_IN_LIST,
  /** A document sent as text (or nothing at all), in allow-list mode. */
  idRequired: GraphQLOnlyCodes.PERSISTED_QUERY_ID_REQUIRED,
} as const;

/** What a request names: GraphQL-over-HTTP's `documentId`, Apollo APQ's extension and the document's text. */
export interface DocumentParams {
  query?: unknown;
  documentId?: unknown;
  extensions?: unknown;
}

/**
 * A request error of GraphQL-over-HTTP (nothing executed): 400 when answered as application/graphql-response+json; 200
 * as application/json, which that spec keeps for legacy clients (Yoga reads `spec: true` so).
 */
const REQUEST_ERROR = { spec: true, status: 400 };

const SHA256_HEX = /^[0-9a-f]{64}$/;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
export const sha256Hex = (document: string) => createHash('sha256').update(document).digest('hex');

/**
 * The hash a request names, lower-case hex: `documentId: "sha256:<hex>"` (the GraphQL-over-HTTP persisted documents
 * convention; a bare hex also) or `extensions.persistedQuery: { version: 1, sha256Hash }` (Apollo APQ).
 */
export function documentIdOf(params: DocumentParams): string | undefined {
  if (typeof params.documentId === 'string') return params.documentId.replace(/^sha256:/, '').toLowerCase();
  const persisted = isObject(params.extensions) ? params.extensions.persistedQuery : undefined;
  if (isObject(persisted) && persisted.version === 1 && typeof persisted.sha256Hash === 'string') return persisted.sha256Hash.toLowerCase();
  return undefined;
}

/** The manifest file's JSON; a file that cannot be read or parsed is said as GRAPHQL_PERSISTED_DOCUMENTS's fault, with the fix. */
function manifestJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new Error(
      `GRAPHQL_PERSISTED_DOCUMENTS: cannot read ${file} (${code}): set it to the path of a readable manifest ` +
        '(`pnpm documents:manifest` writes packages/client/persisted-documents.json), or leave it unset',
      { cause: error },
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`GRAPHQL_PERSISTED_DOCUMENTS: ${file} is not JSON (${(error as Error).message})`, { cause: error });
  }
}

/**
 * The manifest as a map from hash to document. Two formats: `{ "<sha256 hex>": "<document>" }` (what
 * `pnpm documents:manifest` and GraphQL Code Generator's client preset write) and Apollo's
 * `{ format: "apollo-persisted-query-manifest", operations: [{ id, body }] }`. Every hash is checked against its
 * document: a manifest edited by hand, or a document altered after its hash was taken, stops the start-up rather than
 * running a text its clients did not sign off.
 */
export function readManifest(file: string): Map<string, string> {
  const json = manifestJson(file);
  const entries: [string, unknown][] =
    isObject(json) && json.format === 'apollo-persisted-query-manifest' && Array.isArray(json.operations)
      ? json.operations.map((operation: unknown) => (isObject(operation) ? [String(operation.id), operation.body] : ['', undefined]))
      : isObject(json)
        ? Object.entries(json)
        : [];
  if (entries.length === 0 && !isObject(json)) throw new Error(`${file}: not a persisted documents manifest (a JSON object of hash → document)`);
  // bound: the manifest read at start
  const documents = new Map<string, string>();
  for (const [hash, document] of entries) {
    if (!SHA256_HEX.test(hash) || typeof document !== 'string')
      throw new Error(`${file}: "${hash.slice(0, 80)}" is not a SHA-256 hash (hex) with a document`);
    if (sha256Hex(document) !== hash) throw new Error(`${file}: the document listed as ${hash} does not hash to it`);
    documents.set(hash, document);
  }
  return documents;
}

/** The registered documents and the mode: one instance per app, shared by its doors. */
export class PersistedDocuments {
  constructor(
    private readonly documents: ReadonlyMap<string, string>,
    readonly trustedOnly: boolean,
  ) {}

  static fromConfig(config: PersistedDocumentsConfig): PersistedDocuments {
    return new PersistedDocuments(config.file ? readManifest(config.file) : new Map(), config.trustedOnly);
  }

  get size(): number {
    return this.documents.size;
  }

  /** The listed document of a hash, if any. */
  lookup(hash: string): string | undefined {
    return this.documents.get(hash);
  }

  /**
   * The document a request runs, or why it may not run. A text is run as such unless only trusted documents run (a
   * text sent with its hash, as an APQ client does after PERSISTED_QUERY_NOT_FOUND, too, as Yoga's plugin does); else
   * the document the hash names. Undefined when a request carries neither: the door answers that as it always has.
   */
  resolve(params: DocumentParams): { query: string } | GraphQLError | undefined {
    const { query } = params;
    if (query !== undefined && query !== null && query !== '') {
      // A text (or a `query` of another type, which Yoga refuses as such: left to it outside allow-list mode).
      if (this.trustedOnly) return this.idRequired();
      return typeof query === 'string' ? { query } : undefined;
    }
    const id = documentIdOf(params);
    if (id === undefined) return this.trustedOnly ? this.idRequired() : undefined;
    const listed = this.lookup(id);
    return listed === undefined ? this.notFound() : { query: listed };
  }

  notFound(): GraphQLError {
    return this.trustedOnly
      ? createGraphQLError('PersistedQueryNotInList: this server runs only the documents of its manifest, and this hash is not one of them', {
          extensions: { code: PERSISTED_DOCUMENT_CODES.notInList, http: REQUEST_ERROR },
        })
      : createGraphQLError('PersistedQueryNotFound: no document is registered under this hash; send the document itself', {
          extensions: { code: PERSISTED_DOCUMENT_CODES.notFound, http: REQUEST_ERROR },
        });
  }

  idRequired(): GraphQLError {
    return createGraphQLError(
      'PersistedQueryIdRequired: this server runs only trusted documents; send the hash of a registered document (documentId or extensions.persistedQuery), not its text',
      {
        extensions: { code: PERSISTED_DOCUMENT_CODES.idRequired, http: REQUEST_ERROR },
      },
    );
  }

  /** Yoga's plugin for its HTTP handler (GET, POST, SSE and multipart answers alike), with the lookups and errors above. */
  plugin(): Plugin {
    const plugin = usePersistedOperations({
      getPersistedOperation: (hash) => this.lookup(hash) ?? null,
      // Yoga's GET parser keeps only query, variables, operationName and extensions: a GET's documentId is read here.
      extractPersistedOperationId: (params, request) =>
        documentIdOf(params as DocumentParams) ??
        documentIdOf({ documentId: new URL(request.url).searchParams.get('documentId') ?? undefined }) ??
        null,
      allowArbitraryOperations: !this.trustedOnly,
      customErrors: {
        notFound: () => this.notFound(),
        // Neither a text nor a hash: in allow-list mode the hash is what is missing; otherwise Yoga's own answer.
        keyNotFound: () =>
          this.trustedOnly
            ? this.idRequired()
            : createGraphQLError('Must provide query string.', { extensions: { code: 'BAD_REQUEST', http: REQUEST_ERROR } }),
        persistedQueryOnly: () => this.idRequired(),
      },
    }) as Plugin;
    return {
      ...plugin,
      // The plugin reads `params.query` unguarded: an operation that is not an object (a batch of `[null]`, found by the
      // fuzz) is left to Yoga's own parameter check, which answers it 400.
      onParams: (payload) => (isObject(payload.params) ? plugin.onParams?.(payload) : undefined),
    };
  }
}

export const isPersistedDocumentRefusal = (error: unknown): error is GraphQLError =>
  error instanceof GraphQLError && Object.values<unknown>(PERSISTED_DOCUMENT_CODES).includes(error.extensions.code);
