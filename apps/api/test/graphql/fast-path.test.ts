// The GraphQL fast path (graphql/acceleration/http-fast-path.ts) answers exactly as Yoga's handler does: the same status, headers
// and body for every kind of request (POST, GET, bodies that are not JSON, other methods), and the GraphQL-over-HTTP
// audit (graphql-http) passes the same on both.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { serverAudits } from 'graphql-http';
import { hashPassword } from '../../src/auth/credentials/passwords.js';
import { createTestApp } from '../support/app.js';
import { seedUsersWithPosts } from '../support/fixtures.js';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { CreatePostDocument, PostCreatedDocument, UserDocument } from '../../../../packages/client/src/index.js';
import { repoRoot } from '../../src/paths.js';

const MANIFEST = path.join(repoRoot, 'packages/client/persisted-documents.json');
const METRICS_TOKEN = 'test-metrics-token-0123456789';
const ORIGIN = 'https://app.users-posts.test';
const hashOf = (document: string) => createHash('sha256').update(document).digest('hex');

let fast: FastifyInstance;
let yoga: FastifyInstance;
/** Each app's own access token for user 1 (an ADMIN): a token is valid only on the app that issued it. */
const tokens = new Map<FastifyInstance, string>();

async function login(app: FastifyInstance): Promise<string> {
  await app.db.prisma.user.update({ where: { email: 'user1@example.com' }, data: { passwordHash: await hashPassword('fast-path-password') } });
  const response = await app.inject({ method: 'POST', url: '/login', payload: { email: 'user1@example.com', password: 'fast-path-password' } });
  return (response.json() as { accessToken: string }).accessToken;
}

beforeAll(async () => {
  // Both with the client's manifest: documents sent by hash take the fast path too. The corpus sends each app over
  // 1,000 requests from one address within a minute (the test config's default bucket): a higher limit, the same on
  // both, so no case is answered 429 by the rate limiter instead of by GraphQL.
  // One CORS origin listed, so the answers carry CORS headers (Vary, Access-Control-*) to compare.
  const config = {
    persistedDocuments: { file: MANIFEST, trustedOnly: false },
    defaultRateLimit: { max: 100_000, windowMs: 60_000 },
    corsOrigins: [ORIGIN],
  };
  fast = await createTestApp({ ...config, graphqlFastPath: true });
  yoga = await createTestApp({ ...config, graphqlFastPath: false });
  // The same rows in both (fresh databases: the same ids), user 1 an ADMIN, logged in on both alike.
  for (const app of [fast, yoga]) {
    await seedUsersWithPosts(app.db.prisma, 5, 2);
    tokens.set(app, await login(app));
  }
}, 60_000);
afterAll(async () => {
  await fast?.close();
  await yoga?.close();
});

interface Case {
  name: string;
  /** POST unless given. */
  method?: 'GET' | 'POST' | 'HEAD' | 'OPTIONS' | 'PUT' | 'DELETE';
  /** The body, sent as JSON text (with `content-type: application/json` unless `headers` say otherwise). */
  payload?: unknown;
  /** The body as sent, instead of `payload`: text that is not JSON, or bytes. */
  body?: string | Buffer;
  /** The query string (a list of pairs may repeat a name). */
  params?: Record<string, string> | [string, string][];
  /** Over the defaults; `undefined` leaves a header out (e.g. no content-type at all). */
  headers?: Record<string, string | undefined>;
  /** Sent with the app's own token for user 1. */
  authenticated?: boolean;
  // Only these Accept values (a subscription under any-type Accept is an endless SSE stream, on both paths).
  accepts?: (string | undefined)[];
}

// Compilable (no string literal): the compiled executor, which only the fast path asks for, runs it (a marker below).
const query = '{ users(limit: 2) { id name } }';
const anonymousMutation = 'mutation { createPost(title: "t", content: "c", authorId: "1") { id } }';
const userHash = hashOf(UserDocument);
const apq = (sha256Hash: string) => ({ persistedQuery: { version: 1, sha256Hash } });
/** `levels` arrays one inside the other, as JSON text (20,000: deeper than a recursive walk survives on Node's default stack). */
const nestedJson = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

/** The cases of a group, their names prefixed and `common` given to each. */
const named = (prefix: string, common: Partial<Case>, group: Case[]): Case[] =>
  group.map((testCase) => ({ ...testCase, ...common, name: `${prefix}${testCase.name}` }));

const cases: Case[] = [
  { name: 'a query by id', payload: { query: '{ user(id: "2") { id name email } }' } },
  { name: 'a nested query', payload: { query: '{ users(limit: 3) { id name posts { id title author { name } } } }' } },
  {
    name: 'variables and operationName',
    payload: { query: 'query A($id: ID!) { user(id: $id) { name } } query B { users { id } }', variables: { id: '3' }, operationName: 'A' },
  },
  { name: 'a persisted document by documentId', payload: { documentId: `sha256:${userHash}`, variables: { id: '2' } } },
  {
    name: 'a persisted document by APQ hash',
    payload: { extensions: apq(userHash), variables: { id: '3' } },
  },
  { name: 'an unknown persisted hash', payload: { documentId: `sha256:${'0'.repeat(64)}` } },
  {
    name: 'a listed hash beside a query that is not a string',
    payload: { documentId: `sha256:${userHash}`, query: 1, variables: { id: '2' } },
  },
  {
    name: 'an APQ hash beside another extension',
    payload: { extensions: { ...apq(userHash), other: true }, variables: { id: '2' } },
  },
  // A mutation from the manifest, anonymous: run (and refused by @auth) on both paths.
  {
    name: 'a persisted mutation by documentId',
    payload: { documentId: `sha256:${hashOf(CreatePostDocument)}`, variables: { title: 't', content: 'c', authorId: '1' } },
  },
  // Yoga's persisted-documents plugin reads a `documentId` in the URL of any request (persisted-documents.ts).
  { name: 'a POST naming its document in the URL', params: { documentId: `sha256:${userHash}` }, payload: { variables: { id: '2' } } },
  { name: 'a POST with a query in its body and a documentId in its URL', params: { documentId: `sha256:${userHash}` }, payload: { query } },
  { name: 'a POST with a query in its URL and another in its body', params: { query: '{ users { id } }' }, payload: { query } },
  { name: 'an empty query beside a listed hash', payload: { query: '', documentId: `sha256:${userHash}`, variables: { id: '2' } } },
  { name: 'a null query beside a listed hash', payload: { query: null, documentId: `sha256:${userHash}`, variables: { id: '2' } } },
  { name: 'null variables, operationName and extensions', payload: { query, variables: null, operationName: null, extensions: null } },
  { name: 'an empty operationName', payload: { query, operationName: '' } },
  { name: 'an operationName that is not a string', payload: { query, operationName: 1 } },
  { name: 'an unknown parameter that is null (Yoga skips null ones)', payload: { query, nope: null } },
  { name: 'a missing user (null)', payload: { query: '{ user(id: "999") { id } }' } },
  { name: 'a syntax error', payload: { query: '{ users { id ' } },
  { name: 'a validation error', payload: { query: '{ users { nope } }' } },
  { name: 'a variable of the wrong type', payload: { query: 'query ($n: Int) { users(limit: $n) { id } }', variables: { n: 'x' } } },
  { name: 'a missing required variable', payload: { query: 'query ($id: ID!) { user(id: $id) { id } }' } },
  { name: 'an operationName that picks nothing', payload: { query: '{ users { id } }', operationName: 'Nope' } },
  { name: 'two operations and no operationName', payload: { query: 'query A { users { id } } query B { users { id } }' } },
  { name: 'a resolver error (invalid argument)', payload: { query: '{ users(limit: -1) { id } }' } },
  { name: 'a non-null root field that fails (currentUser, anonymous)', payload: { query: '{ currentUser { id } }' } },
  { name: 'an anonymous mutation (UNAUTHENTICATED)', payload: { query: anonymousMutation } },
  { name: 'over the cost limit', payload: { query: '{ users(limit: 1000) { posts { author { posts { author { posts { id } } } } } } }' } },
  {
    name: 'over the depth limit',
    payload: { query: '{ users { posts { author { posts { author { posts { author { posts { author { posts { author { id } } } } } } } } } } } }' },
  },
  {
    name: 'over the alias limit (armor throws from validation)',
    payload: { query: `{ ${Array.from({ length: 16 }, (_, i) => `a${i}: statistics { totalUsers }`).join(' ')} }` },
  },
  // Found by an attacker's review: a plugin that throws before execution (the cost check meets `@include(if: null)`).
  {
    name: 'a null variable for @include (thrown before execution)',
    payload: { query: 'query ($a: Boolean = true) { users(limit: 1) @include(if: $a) { id } }', variables: { a: null } },
  },
  {
    name: 'a null variable for @skip in a mutation',
    payload: { query: 'mutation ($a: Boolean = true) { deleteUser(id: "5") @skip(if: $a) }', variables: { a: null } },
  },
  // Content-Types Yoga's parser does not take as JSON (case, space before the parameters, a tab), and some it does.
  ...[
    'Application/json',
    'application/json ; charset=utf-8',
    'application/json\t;charset=utf-8',
    'APPLICATION/JSON',
    'application/json;charset=utf-8',
    'application/json; charset=UTF-8',
    'application/json; boundary=x',
    'application/json, text/plain',
    'application/json;charset=utf-8, text/plain',
  ].map((type) => ({
    name: `Content-Type ${JSON.stringify(type)}`,
    payload: { query },
    headers: { 'content-type': type },
  })),
  { name: 'introspection', payload: { query: '{ __schema { queryType { name } } }' } },
  { name: 'an unknown parameter', payload: { query: '{ users { id } }', nope: 1 } },
  { name: 'extensions', payload: { query: '{ users { id } }', extensions: { a: 1 } } },
  { name: 'empty extensions', payload: { query: '{ users { id } }', extensions: {} } },
  { name: 'variables that are not an object', payload: { query: '{ users { id } }', variables: [1] } },
  { name: 'a batch', payload: [{ query: '{ user(id: "1") { id } }' }, { query: '{ user(id: "2") { id } }' }] },
  {
    name: 'a batch of persisted documents',
    payload: [
      { documentId: `sha256:${userHash}`, variables: { id: '2' } },
      { extensions: apq(userHash), variables: { id: '3' } },
    ],
  },
  { name: 'an empty batch', payload: [] },
  { name: 'a query that is not a string', payload: { query: 42 } },
  // Incremental delivery is Yoga's (multipart, SSE, or 406 for a client that takes neither); a word in a comment too.
  { name: '@defer', payload: { query: '{ users(limit: 2) { id ... @defer { name } } }' } },
  { name: '@defer in a comment only', payload: { query: `${query} # @defer` } },
  {
    name: 'a persisted subscription by documentId',
    payload: { documentId: `sha256:${hashOf(PostCreatedDocument)}` },
    accepts: ['application/json', 'application/graphql-response+json', 'application/xml'],
  },
  {
    name: 'a subscription over POST',
    payload: { query: 'subscription { postCreated { id } }' },
    accepts: ['application/json', 'application/graphql-response+json', 'application/xml'],
  },
];

// GET: the parameters in the query string (variables and extensions as JSON text). The fast path takes none of these:
// they show that declining leaves each one to Yoga untouched (and that a document it parsed for a POST, cached by
// Yoga's parser, is still refused over GET).
const getCases = named('GET ', { method: 'GET' }, [
  { name: 'a query', params: { query } },
  {
    name: 'variables and operationName',
    params: { query: 'query A($id: ID!) { user(id: $id) { name } } query B { users { id } }', variables: '{"id":"3"}', operationName: 'A' },
  },
  { name: 'extensions', params: { query, extensions: '{"a":1}' } },
  { name: 'malformed variables', params: { query: 'query ($id: ID!) { user(id: $id) { id } }', variables: '{"id":' } },
  { name: 'variables that are not an object', params: { query, variables: '[1]' } },
  { name: 'variables that are JSON null', params: { query, variables: 'null' } },
  { name: 'malformed extensions', params: { query, extensions: '{' } },
  { name: 'no query', params: {} },
  { name: 'an empty query', params: { query: '' } },
  { name: 'only variables', params: { variables: '{"id":"2"}' } },
  { name: 'a syntax error', params: { query: '{ users { id ' } },
  { name: 'a validation error', params: { query: '{ users { nope } }' } },
  { name: 'an operationName that picks nothing', params: { query, operationName: 'Nope' } },
  { name: 'an unknown parameter', params: { query, nope: '1' } },
  // The same text as the POST case above: Yoga's parse cache holds it by now, and the GET must still be refused (405).
  { name: 'a mutation', params: { query: anonymousMutation } },
  {
    name: 'a mutation picked by operationName',
    params: { query: `query Q { users { id } } mutation M ${anonymousMutation.slice('mutation '.length)}`, operationName: 'M' },
  },
  {
    name: 'a query picked by operationName beside a mutation',
    params: { query: `query Q { users { id } } mutation M ${anonymousMutation.slice('mutation '.length)}`, operationName: 'Q' },
  },
  { name: 'a persisted document by documentId', params: { documentId: `sha256:${userHash}`, variables: '{"id":"2"}' } },
  { name: 'a persisted document by APQ hash', params: { extensions: JSON.stringify(apq(userHash)), variables: '{"id":"3"}' } },
  { name: 'an unknown persisted hash', params: { documentId: `sha256:${'0'.repeat(64)}` } },
  {
    name: 'a persisted mutation by documentId',
    params: { documentId: `sha256:${hashOf(CreatePostDocument)}`, variables: '{"title":"t","content":"c","authorId":"1"}' },
  },
  { name: 'a query beside a documentId', params: { query, documentId: `sha256:${hashOf(CreatePostDocument)}` } },
  // Batches are POST-only: what a client might send for one over GET.
  {
    name: 'a query parameter given twice (batch-like)',
    params: [
      ['query', query],
      ['query', '{ users { id } }'],
    ],
  },
  { name: 'a JSON batch as the query parameter', params: { query: JSON.stringify([{ query }, { query }]) } },
  { name: 'a JSON batch as its body', body: JSON.stringify([{ query }, { query }]), headers: { 'content-type': 'application/json' } },
  { name: 'a query in its body', body: JSON.stringify({ query }), headers: { 'content-type': 'application/json' } },
  {
    name: 'a subscription',
    params: { query: 'subscription { postCreated { id } }' },
    accepts: ['application/json', 'application/graphql-response+json', 'application/xml'],
  },
  // A browser opening the endpoint: GraphiQL (on in the test config), the same page on both.
  { name: 'a browser with no query', params: {}, accepts: ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'] },
]);

// POST bodies that are not one JSON object, or not JSON at all, and Content-Types other than JSON's. Many are refused by
// Fastify's body parsing before the route runs; of the others, the fast path takes only those Fastify decodes to one
// JSON object (whatever the charset said) and leaves the rest to Yoga.
const bodyCases = named('body: ', {}, [
  { name: 'bad JSON', body: '{"query": "{ users { id } }"' },
  { name: 'an empty body', body: '' },
  { name: 'whitespace', body: ' \n' },
  { name: 'JSON null', body: 'null' },
  { name: 'a JSON string', body: JSON.stringify(query) },
  { name: 'a JSON number', body: '42' },
  { name: 'JSON true', body: 'true' },
  { name: 'a UTF-8 byte order mark before the JSON', body: `\uFEFF${JSON.stringify({ query })}` },
  { name: 'duplicate keys (the last one counts)', body: `{"query": ${JSON.stringify('{ users { id } }')}, "query": ${JSON.stringify(query)}}` },
  { name: 'a __proto__ key', body: `{"query": ${JSON.stringify(query)}, "__proto__": {"x": 1}}` },
  { name: 'a constructor.prototype key', body: `{"query": ${JSON.stringify(query)}, "constructor": {"prototype": {"x": 1}}}` },
  { name: 'JSON under text/plain', body: JSON.stringify({ query }), headers: { 'content-type': 'text/plain' } },
  { name: 'a document under text/plain', body: query, headers: { 'content-type': 'text/plain;charset=utf-8' } },
  {
    name: 'a form (application/x-www-form-urlencoded)',
    body: new URLSearchParams({ query }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  },
  { name: 'a document under application/graphql', body: query, headers: { 'content-type': 'application/graphql' } },
  { name: 'JSON under application/graphql+json', body: JSON.stringify({ query }), headers: { 'content-type': 'application/graphql+json' } },
  {
    name: 'JSON under application/graphql-response+json (a response type)',
    body: JSON.stringify({ query }),
    headers: { 'content-type': 'application/graphql-response+json' },
  },
  {
    name: 'multipart/form-data',
    body: `--b\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${JSON.stringify({ query })}\r\n--b--\r\n`,
    headers: { 'content-type': 'multipart/form-data; boundary=b' },
  },
  { name: 'JSON with no content-type', body: JSON.stringify({ query }), headers: { 'content-type': undefined } },
  { name: 'no body and no content-type', headers: { 'content-type': undefined } },
  { name: 'JSON with charset=iso-8859-1', body: JSON.stringify({ query }), headers: { 'content-type': 'application/json; charset=iso-8859-1' } },
  // A non-ASCII byte (é in Latin-1, in a comment of the document): not UTF-8, read the same (or refused the same) on both.
  {
    name: 'Latin-1 bytes with charset=iso-8859-1',
    body: Buffer.from(JSON.stringify({ query: '{ users(limit: 1) { id } } # café' }), 'latin1'),
    headers: { 'content-type': 'application/json; charset=iso-8859-1' },
  },
  { name: 'JSON with charset=utf-16', body: JSON.stringify({ query }), headers: { 'content-type': 'application/json; charset=utf-16' } },
  // The app's body limit (1 MiB, app.ts): just under it is parsed and run, just over it refused before the route.
  { name: 'a body just under the limit (a long comment)', payload: { query: `${query} #${'x'.repeat(1024 * 1024 - 100)}` } },
  { name: 'a body over the limit', payload: { query: `${query} #${'x'.repeat(1024 * 1024)}` } },
  // Deep JSON where the fast path takes it (unused variables), where it is a declared variable's value, in the
  // extensions (declined), and as the whole body (declined: not an object).
  { name: 'deeply nested unused variables', body: `{"query": ${JSON.stringify(query)}, "variables": {"deep": ${nestedJson(20_000)}}}` },
  {
    name: 'a deeply nested value for a declared variable',
    body: `{"query": "query ($id: ID!) { user(id: $id) { id } }", "variables": {"id": ${nestedJson(20_000)}}}`,
  },
  { name: 'deeply nested extensions', body: `{"query": ${JSON.stringify(query)}, "extensions": {"deep": ${nestedJson(20_000)}}}` },
  { name: 'a deeply nested array as the body', body: nestedJson(20_000) },
]);

// The other methods on /graphql: OPTIONS (served by the route), HEAD (Fastify's for GET), PUT (refused with 405 by its
// own route), DELETE (no route).
const methodCases: Case[] = [
  { name: 'OPTIONS', method: 'OPTIONS' },
  { name: 'OPTIONS with a JSON body', method: 'OPTIONS', payload: { query } },
  { name: 'HEAD with a query', method: 'HEAD', params: { query } },
  { name: 'PUT with a JSON body', method: 'PUT', payload: { query } },
  { name: 'DELETE', method: 'DELETE', params: { query } },
];

// Callers: a token that is not valid (401, WWW-Authenticate, before the route), browsers (CORS), and an authenticated
// caller (each app its own token; an answer for a caller is `cache-control: no-store`).
const callerCases: Case[] = [
  { name: 'an invalid bearer token', payload: { query }, headers: { authorization: 'Bearer not-a-token' } },
  // Browsers: CORS headers from the listed origin (and none for another), on both paths' answers alike.
  { name: 'a query from the listed origin', payload: { query }, headers: { origin: ORIGIN } },
  { name: 'an error from the listed origin', payload: { query: '{ users { nope } }' }, headers: { origin: ORIGIN } },
  { name: 'a query from another origin', payload: { query }, headers: { origin: 'https://elsewhere.test' } },
  { name: 'a GET from the listed origin', method: 'GET', params: { query }, headers: { origin: ORIGIN } },
  {
    name: 'a CORS preflight',
    method: 'OPTIONS',
    headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization' },
  },
  { name: 'an authenticated query', payload: { query: '{ currentUser { id name email role } }' }, authenticated: true },
  { name: 'an authenticated persisted document', payload: { documentId: `sha256:${userHash}`, variables: { id: '2' } }, authenticated: true },
  { name: 'an authenticated query over GET', method: 'GET', params: { query: '{ currentUser { id name email role } }' }, authenticated: true },
  { name: 'an authenticated error', payload: { query: '{ users(limit: -1) { id } }' }, authenticated: true },
];

/** The deletion the authenticated-mutation test runs once on each app (not in the corpus: it changes the rows). */
const deletion: Case = { name: 'an authenticated mutation', payload: { query: 'mutation { deleteUser(id: "5") }' }, authenticated: true };

const corpus = [...cases, ...getCases, ...bodyCases, ...methodCases, ...callerCases];

const accepts = [
  undefined,
  '*/*',
  'application/json',
  'application/graphql-response+json',
  'application/graphql-response+json, application/json;q=0.9',
  'application/json, application/graphql-response+json',
  'application/json; charset=iso-8859-1',
  'application/xml',
  // The streaming types the README names (SSE, incremental delivery): alone (answered by Yoga, a regular result as one
  // event or part) and as clients send them beside JSON (urql's default Accept; Apollo's for @defer).
  'text/event-stream',
  'multipart/mixed',
  'application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed',
  'multipart/mixed;deferSpec=20220824,application/json',
];

/**
 * Headers that differ between two answers of the same server, left out of the comparison; every other header is
 * compared (content-type, content-length, vary, cache-control, allow, www-authenticate, the CORS ones, the rate limit's
 * x-ratelimit-limit and ratelimit-policy, the security headers, transfer-encoding…). Retry-After would be too, but no
 * answer here has one: it comes with a 429, from the rate limiter before the route runs or from the SSE subscription caps.
 */
const PER_REQUEST_HEADERS = new Set([
  'date', // the clock
  'x-request-id', // a fresh UUID per request
  'x-ratelimit-remaining', // each app's own count of its requests (the audit and the metrics reads differ)
  'x-ratelimit-reset', // the end of each app's own window, in absolute seconds
  'ratelimit', // `limit=…, remaining=…, reset=…`: the two above; its limit is x-ratelimit-limit's, compared
]);

async function answer(app: FastifyInstance, testCase: Case, accept: string | undefined) {
  const { method = 'POST', params, payload, body = payload === undefined ? undefined : JSON.stringify(payload) } = testCase;
  const headers = Object.entries({
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(accept ? { accept } : {}),
    ...(testCase.authenticated ? { authorization: `Bearer ${tokens.get(app)}` } : {}),
    ...testCase.headers,
  }).filter((header): header is [string, string] => header[1] !== undefined);
  const response = await app.inject({
    method,
    url: params ? `/graphql?${new URLSearchParams(params).toString()}` : '/graphql',
    headers: Object.fromEntries(headers),
    ...(body === undefined ? {} : { payload: body }),
  });
  const type = String(response.headers['content-type'] ?? '');
  return {
    status: response.statusCode,
    headers: Object.fromEntries(Object.entries(response.headers).filter(([name]) => !PER_REQUEST_HEADERS.has(name))),
    // Yoga's SSE answers ping every 300 ms under NODE_ENV=test: how many pings fit in an answer is the clock's doing.
    body: type.startsWith('text/event-stream') ? response.body.replace(/(:\n\n)+/g, ':\n\n') : response.body,
  };
}

/** Executions of the compiled executor (both outcomes), which only the fast path asks for (compiled-execution.ts). */
async function fastPathExecutions(app: FastifyInstance): Promise<number> {
  const response = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  return [...response.body.matchAll(/^graphql_compiled_executions_total\{[^}]*\} (\d+)$/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
}

describe('the GraphQL fast path answers as Yoga does', () => {
  it.each(corpus.map((c) => [c.name, c] as const))('%s, under every Accept', async (_name, testCase) => {
    for (const accept of testCase.accepts ?? accepts) {
      const [mine, theirs] = [await answer(fast, testCase, accept), await answer(yoga, testCase, accept)];
      expect({ accept, ...mine }).toEqual({ accept, ...theirs });
    }
  });

  it('the corpus exercises both paths and more than one answer (not a 404 or a 500 for everything)', async () => {
    const seen = new Map<string, { status: number; headers: Record<string, unknown>; fast: boolean }>();
    for (const testCase of corpus) {
      const before = await fastPathExecutions(fast);
      const { status, headers } = await answer(fast, testCase, 'application/json');
      seen.set(testCase.name, { status, headers, fast: (await fastPathExecutions(fast)) > before });
    }
    const statuses = (group: Case[]) => new Set(group.map((c) => seen.get(c.name)!.status));
    // The plain queries ran on the fast path (compiled executor); nothing that Yoga answers did, and Yoga's app never does.
    for (const name of [
      'a POST with a query in its URL and another in its body',
      'a persisted document by documentId',
      'Content-Type "application/json;charset=utf-8"',
      'body: deeply nested unused variables',
      'a query from the listed origin',
      'an authenticated query',
    ])
      expect({ name, fast: seen.get(name)!.fast }).toEqual({ name, fast: true });
    expect(getCases.filter((c) => seen.get(c.name)!.fast)).toEqual([]);
    // Of the odd bodies, only those Fastify decodes to one plain JSON object (a BOM, duplicate keys, another charset).
    expect(bodyCases.filter((c) => seen.get(c.name)!.fast).map((c) => c.name)).toEqual(
      [
        'a UTF-8 byte order mark before the JSON',
        'duplicate keys (the last one counts)',
        'JSON with charset=iso-8859-1',
        'Latin-1 bytes with charset=iso-8859-1',
        'JSON with charset=utf-16',
        'a body just under the limit (a long comment)',
        'deeply nested unused variables',
      ].map((name) => `body: ${name}`),
    );
    expect(methodCases.filter((c) => seen.get(c.name)!.fast)).toEqual([]);
    expect(await fastPathExecutions(yoga)).toBe(0);
    // Each group answers successes and refusals, none a 404 or 5xx: the requests reached /graphql and were read.
    expect([...statuses(getCases)]).toEqual(expect.arrayContaining([200, 400, 405]));
    expect([...statuses(bodyCases)]).toEqual(expect.arrayContaining([200, 400, 413, 415]));
    for (const group of [cases, getCases, bodyCases, callerCases])
      expect([...statuses(group)].filter((status) => status === 404 || status >= 500)).toEqual([]);
    // The headers compared were there to compare.
    expect(seen.get('GET a mutation')!.headers.allow).toBe('POST');
    expect(seen.get('an invalid bearer token')!.headers['www-authenticate']).toBeDefined();
    expect(seen.get('an authenticated query')!.headers['cache-control']).toBe('no-store');
    expect(seen.get('a query by id')!.headers['x-ratelimit-limit']).toBeDefined();
    expect(seen.get('a query from the listed origin')!.headers).toMatchObject({ vary: 'Origin', 'access-control-allow-origin': ORIGIN });
  });

  it('keeps choosing as Yoga does past the Accept headers it remembers (a client varying the header on every request)', async () => {
    const testCase = cases[0]!;
    for (let i = 0; i < 150; i++) {
      const accept = i % 3 ? `application/graphql-response+json;q=0.${i % 10}, application/json;q=0.${(i + 5) % 10}` : `application/xml;v=${i}`;
      const [mine, theirs] = [await answer(fast, testCase, accept), await answer(yoga, testCase, accept)];
      expect({ accept, ...mine }).toEqual({ accept, ...theirs });
    }
  });

  it('a document it has prepared is still checked per request: other variables, another operation, a cost over the limit, a principal', async () => {
    // One text sent again and again (the fast path keeps what parsing and validating it gave): what depends on the
    // request (variables, the operation named, the work budget, who asks) is decided anew every time, as Yoga does.
    const text = 'query One($n: Int!) { users(limit: $n) { id name } } query Two { users(limit: 1) { id } }';
    const sequence: Case[] = [
      { name: 'one, 2 rows', payload: { query: text, operationName: 'One', variables: { n: 2 } } },
      { name: 'two', payload: { query: text, operationName: 'Two' } },
      { name: 'one, a limit over the budget', payload: { query: text, operationName: 'One', variables: { n: 1_000_000 } } },
      { name: 'one, a variable of the wrong type', payload: { query: text, operationName: 'One', variables: { n: 'many' } } },
      { name: 'no operation named', payload: { query: text } },
      { name: 'one, 3 rows, authenticated', payload: { query: text, operationName: 'One', variables: { n: 3 } }, authenticated: true },
      { name: 'one, 1 row', payload: { query: text, operationName: 'One', variables: { n: 1 } } },
    ];
    const statuses: number[] = [];
    const bodies: string[] = [];
    for (const testCase of sequence) {
      const [mine, theirs] = [await answer(fast, testCase, 'application/json'), await answer(yoga, testCase, 'application/json')];
      expect({ name: testCase.name, ...mine }).toEqual({ name: testCase.name, ...theirs });
      statuses.push(mine.status);
      bodies.push(mine.body);
    }
    expect(statuses).toEqual([200, 200, 400, 400, 400, 200, 200]);
    expect(bodies[2]).toContain('QUERY_TOO_COMPLEX');
    expect(bodies[3]).toContain('BAD_USER_INPUT');
    expect(bodies.map((body) => (body.match(/"id"/g) ?? []).length)).toEqual([2, 1, 0, 0, 0, 3, 1]);
  });

  it('an authenticated mutation (each app its own token; the same answer and the same change)', async () => {
    const [mine, theirs] = [await answer(fast, deletion, undefined), await answer(yoga, deletion, undefined)];
    expect(mine).toEqual(theirs);
    expect(mine.body).toContain('"deleteUser":true');
    expect(await fast.db.prisma.user.count()).toBe(await yoga.db.prisma.user.count());
    // Run once, not once here and again by Yoga: a second deletion would have answered NOT_FOUND.
    const created = await answer(
      fast,
      { name: 'create', payload: { query: 'mutation { createPost(title: "once", content: "c", authorId: "1") { id } }' }, authenticated: true },
      undefined,
    );
    expect(created.status).toBe(200);
    expect(await fast.db.prisma.post.count({ where: { title: 'once' } })).toBe(1);
  });

  it('passes the GraphQL-over-HTTP audit (graphql-http) with the same results as Yoga', async () => {
    const results: Record<string, string[]> = {};
    for (const [name, app] of [
      ['fast', fast],
      ['yoga', yoga],
    ] as const) {
      const url = `${await app.listen({ port: 0, host: '127.0.0.1' })}/graphql`;
      const outcomes = await Promise.all(serverAudits({ url }).map(async (audit) => ({ ...audit, status: (await audit.fn()).status })));
      // MUST requirements all pass (graphql-http's own audit of the spec).
      expect(outcomes.filter((audit) => audit.name.startsWith('MUST') && audit.status !== 'ok').map((audit) => audit.name)).toEqual([]);
      results[name] = outcomes.map((audit) => `${audit.id} ${audit.status}`).sort();
    }
    expect(results.fast).toEqual(results.yoga);
  });
});
