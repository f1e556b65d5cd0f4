// A small typed GraphQL helper: POST /graphql through the same auth layer as the REST client.

/** A GraphQL error as the server sends it (seed §7.2 "GraphQL failure"). */
export interface GraphQLErrorEntry {
  message: string;
  locations?: { line: number; column: number }[];
  path?: (string | number)[];
  extensions?: Record<string, unknown>;
}

/** The JSON answer of `/graphql`: `data` and/or `errors`. A transport failure is thrown instead. */
export interface GraphQLResult<TData> {
  data?: TData | null;
  errors?: GraphQLErrorEntry[];
}

/** A query string that carries its result and variable types, so `graphql(doc, vars)` infers both. */
export type TypedDocument<TData, TVariables> = string & { readonly __types?: (variables: TVariables) => TData };

/** Brands a document string with its types: `const q = gql<Pick<Query, 'currentUser'>>('{ currentUser { id } }')`. */
export function gql<TData, TVariables extends Record<string, unknown> = Record<string, never>>(document: string): TypedDocument<TData, TVariables> {
  return document as TypedDocument<TData, TVariables>;
}

export type GraphQLRequest = <TData, TVariables extends Record<string, unknown> = Record<string, never>>(
  document: TypedDocument<TData, TVariables> | string,
  variables?: TVariables,
) => Promise<GraphQLResult<TData>>;

/**
 * How documents travel. `text` (the default) sends each document whole. `hash` sends only its SHA-256
 * (GraphQL-over-HTTP's `documentId: "sha256:<hex>"`), as a server that runs only trusted documents requires; on
 * PERSISTED_QUERY_NOT_FOUND (a server that takes texts too but has not registered this one) it is sent once more
 * whole, as Apollo's APQ clients do.
 */
export type DocumentTransport = 'text' | 'hash';

export function createGraphQL(
  baseUrl: string,
  fetch: (request: Request) => Promise<Response>,
  transport: DocumentTransport = 'text',
): GraphQLRequest {
  const post = async (body: Record<string, unknown>) => {
    const response = await fetch(
      new Request(`${baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' },
        body: JSON.stringify(body),
      }),
    );
    const type = response.headers.get('content-type') ?? '';
    if (!type.includes('json')) throw new Error(`GraphQL transport failure: HTTP ${response.status} (${type || 'no content type'})`);
    return (await response.json()) as GraphQLResult<never>;
  };
  return async (document, variables) => {
    if (transport === 'text') return post({ query: document, variables: variables ?? {} });
    const result = await post({ documentId: `sha256:${await sha256Hex(document)}`, variables: variables ?? {} });
    const notFound = result.errors?.some((error) => error.extensions?.code === 'PERSISTED_QUERY_NOT_FOUND');
    return notFound ? post({ query: document, variables: variables ?? {} }) : result;
  };
}

const hashes = new Map<string, Promise<string>>();
/** The hex SHA-256 of a document's exact text (what the manifest lists it under), by WebCrypto: browsers and Node alike. */
export function sha256Hex(document: string): Promise<string> {
  let hash = hashes.get(document);
  if (!hash) {
    hash = crypto.subtle
      .digest('SHA-256', new TextEncoder().encode(document))
      .then((digest) => Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join(''));
    // Documents are a program's constants; a caller building texts at run time must not grow this without end.
    if (hashes.size >= 1000) hashes.clear();
    hashes.set(document, hash);
  }
  return hash;
}
