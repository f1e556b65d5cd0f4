// Arbitrary HTTP requests to /graphql: the document (from the schema or garbage) wrapped in every transport shape a client might send.
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../../src/paths.js';
import { encode } from './encoding.js';
import { garbageDocument, schemaDocument, type Document, type GraphQLIdPools } from './graphql-documents.js';
import type { Caller } from './rest-requests.js';

export interface GraphQLRequest {
  method: 'GET' | 'POST';
  /** `/graphql` plus the query string for GET. */
  target: string;
  headers: Record<string, string>;
  body: string | undefined;
  caller: Caller;
}

/** The `variables` a request carries: the document's own, or something else entirely. */
const variablesOf = (document: Document): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(document.variables) },
    { weight: 1, arbitrary: fc.oneof(fc.constant(undefined), fc.constant(null), fc.jsonValue({ maxDepth: 3 }), fc.string()) },
  );

/** A hash of the client's manifest (the fuzzed app knows it): the `CurrentUser` document's. */
const LISTED_HASH = Object.entries(
  JSON.parse(readFileSync(path.join(repoRoot, 'packages/client/persisted-documents.json'), 'utf8')) as Record<string, string>,
).find(([, document]) => document.includes('query CurrentUser'))![0];

function postBody(documents: fc.Arbitrary<Document>): fc.Arbitrary<{ body: string; contentType: string }> {
  const json = (value: unknown) => ({ body: JSON.stringify(value), contentType: 'application/json' });
  const one = documents.chain((document) =>
    fc.record({
      query: fc.constant(document.text),
      variables: variablesOf(document),
      operationName: fc.option(fc.constantFrom('Fuzz', 'A', 'B', ''), { freq: 4, nil: undefined }),
    }),
  );
  return fc.oneof(
    { weight: 12, arbitrary: one.map(json) },
    // batched operations, up to past the limit of 10
    { weight: 1, arbitrary: fc.array(one, { minLength: 0, maxLength: 12 }).map(json) },
    // `query` of the wrong type, or missing
    { weight: 1, arbitrary: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.record({ query: fc.jsonValue({ maxDepth: 2 }) })).map(json) },
    // persisted documents: a hash (listed or not, well formed or not) as documentId or APQ extension, maybe beside a text
    {
      weight: 1,
      arbitrary: fc
        .record({
          hash: fc.oneof(fc.constant(LISTED_HASH), fc.stringMatching(/^[0-9a-f]{64}$/), fc.string({ maxLength: 80 })),
          how: fc.constantFrom('documentId', 'apq', 'apq-v2'),
          text: fc.option(
            documents.map((document) => document.text),
            { nil: undefined },
          ),
          variables: fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
        })
        .map(({ hash, how, text, variables }) =>
          json({
            ...(how === 'documentId'
              ? { documentId: `sha256:${hash}` }
              : { extensions: { persistedQuery: { version: how === 'apq' ? 1 : 2, sha256Hash: hash } } }),
            ...(text === undefined ? {} : { query: text }),
            ...(variables === undefined ? {} : { variables }),
          }),
        ),
    },
    // the document as application/graphql, or a body that is not JSON at all
    { weight: 1, arbitrary: documents.map((document) => ({ body: document.text, contentType: 'application/graphql' })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.string(), fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'))
        .map(([body, contentType]) => ({ body, contentType })),
    },
  );
}

export function graphqlRequest(pools: GraphQLIdPools): fc.Arbitrary<GraphQLRequest> {
  const documents = fc.oneof({ weight: 3, arbitrary: schemaDocument(pools) }, { weight: 1, arbitrary: garbageDocument(pools) });
  const caller = fc.constantFrom<Caller>('anonymous', 'user', 'admin', 'user', 'admin', 'garbage');
  const accept = fc.constantFrom(
    'application/graphql-response+json',
    'application/json',
    'application/graphql-response+json, application/json',
    '*/*',
    'application/xml',
  );
  const post = fc.record({ payload: postBody(documents), accept, caller }).map(({ payload, accept, caller }): GraphQLRequest => ({
    method: 'POST',
    target: '/graphql',
    headers: { 'content-type': payload.contentType, accept },
    body: payload.body,
    caller,
  }));
  // GET carries queries in the URL (a mutation there is refused); a JSON Accept keeps GraphiQL's HTML page out of it.
  const get = fc
    .record({ document: documents, caller, variables: fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }) })
    .map(({ document, caller, variables }): GraphQLRequest => ({
      method: 'GET',
      target: `/graphql?query=${encode(document.text)}${variables === undefined ? '' : `&variables=${encode(JSON.stringify(variables))}`}`,
      headers: { accept: 'application/graphql-response+json' },
      body: undefined,
      caller,
    }));
  return fc.oneof({ weight: 9, arbitrary: post }, { weight: 1, arbitrary: get });
}
