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
export function gql<TData, TVariables extends Record<string, unknown> = Record<string, never>>(
  document: string,
): TypedDocument<TData, TVariables> {
  return document as TypedDocument<TData, TVariables>;
}

export type GraphQLRequest = <TData, TVariables extends Record<string, unknown> = Record<string, never>>(
  document: TypedDocument<TData, TVariables> | string,
  variables?: TVariables,
) => Promise<GraphQLResult<TData>>;

export function createGraphQL(baseUrl: string, fetch: (request: Request) => Promise<Response>): GraphQLRequest {
  return async (document, variables) => {
    const response = await fetch(
      new Request(`${baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' },
        body: JSON.stringify({ query: document, variables: variables ?? {} }),
      }),
    );
    const type = response.headers.get('content-type') ?? '';
    if (!type.includes('json')) throw new Error(`GraphQL transport failure: HTTP ${response.status} (${type || 'no content type'})`);
    return (await response.json()) as GraphQLResult<never>;
  };
}
