// Compiled execution (graphql/compiled-execution.ts) answers exactly as graphql-js does: the same status and body for
// every query shape and every error path, with the compiled answer used where there is no error (the metrics say which
// executor answered), and graphql-js's where there is one.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_GRAPHQL_LIMITS } from '../src/graphql/limits.js';
import { createTestApp } from './support/app.js';
import { seedUsersWithPosts } from './support/fixtures.js';

let compiled: FastifyInstance;
let reference: FastifyInstance;
const METRICS_TOKEN = 'test-metrics-token-0123456789';
/** Small enough that a query can come near it: a re-run charged on top of the compiled run would go over. */
const MAX_NODES = 60;

beforeAll(async () => {
  const graphqlLimits = { ...DEFAULT_GRAPHQL_LIMITS, maxNodes: MAX_NODES };
  compiled = await createTestApp({ graphqlCompiledExecution: { afterExecutions: 1 }, graphqlLimits });
  reference = await createTestApp({ graphqlCompiledExecution: false, graphqlLimits });
  // The same rows in both (fresh databases: the same ids).
  for (const app of [compiled, reference]) {
    await seedUsersWithPosts(app.db.prisma, 6, 3);
    // The same timestamps too, so that answers with createdAt compare.
    const createdAt = new Date('2026-01-02T03:04:05.678Z');
    await app.db.prisma.user.updateMany({ data: { createdAt } });
    await app.db.prisma.post.updateMany({ data: { createdAt } });
  }
}, 60_000);
afterAll(async () => {
  await compiled?.close();
  await reference?.close();
});

interface Case {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
}

const successes: Case[] = [
  { name: 'a user by id', query: '{ user(id: "2") { id name email age role createdAt } }' },
  { name: 'every field of nested posts (each read column)', query: '{ users(limit: 2) { posts { id title content createdAt author { id name createdAt } } } }' },
  { name: 'nested posts asked for through fragments only', query: '{ users(limit: 2) { posts { ...P ... on Post { createdAt } } } } fragment P on Post { title }' },
  { name: 'an id that is no number (null, no error)', query: '{ user(id: "abc") { id } }' },
  { name: 'a nested read', query: '{ users(limit: 3) { id name posts { id title author { name } } } }' },
  { name: 'a missing user (null, no error)', query: '{ user(id: "999") { id } }' },
  { name: 'aliases of one field', query: '{ a: user(id: "1") { name } b: user(id: "2") { n: name } }' },
  { name: 'named and inline fragments', query: 'query { users(limit: 2) { ...U posts { ... on Post { id } } } } fragment U on User { id name }' },
  { name: 'fields merged across fragments', query: '{ user(id: "1") { id ... on User { id name } ...F } } fragment F on User { name posts { id } }' },
  { name: '__typename at every level', query: '{ __typename users(limit: 1) { __typename posts { __typename author { __typename } } } }' },
  { name: 'variables', query: 'query ($id: ID!, $n: Int) { user(id: $id) { name } users(limit: $n) { id } }', variables: { id: '3', n: 2 } },
  { name: 'a variable defaulted', query: 'query ($n: Int = 2) { posts(limit: $n) { id } }' },
  { name: 'an optional variable not given (left to graphql-js)', query: 'query ($n: Int) { posts(limit: $n) { id } }' },
  { name: 'an ID given as a number', query: 'query ($id: ID!) { user(id: $id) { id } }', variables: { id: 4 } },
  { name: '@include and @skip from variables', query: 'query ($yes: Boolean!, $no: Boolean!) { user(id: "1") { id name @include(if: $no) email @skip(if: $no) posts @include(if: $yes) { id } } }', variables: { yes: true, no: false } },
  { name: 'an operation picked by name', query: 'query A { statistics { totalUsers } } query B { statistics { totalPosts } }', operationName: 'B' },
  { name: 'a connection page', query: '{ postsConnection(first: 2) { totalCount edges { cursor node { id title } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }' },
  { name: 'the most recent posts', query: '{ recentPosts(limit: 3) { id author { id } } }' },
  { name: 'introspection', query: '{ __schema { queryType { name } types { name kind } } __type(name: "User") { fields { name type { kind ofType { name } } } } }' },
];

const failures: Case[] = [
  { name: 'an Int given as a numeric string (refused)', query: 'query ($n: Int) { posts(limit: $n) { id } }', variables: { n: '2' } },
  { name: 'a non-null root field that fails (data: null)', query: '{ statistics { totalUsers } currentUser { id } }' },
  { name: 'an invalid argument beside a good field (partial data)', query: '{ user(id: "1") { name } posts(limit: -1) { id } }' },
  { name: 'a variable of the wrong type', query: 'query ($n: Int) { users(limit: $n) { id } }', variables: { n: 'x' } },
  { name: 'a required variable missing', query: 'query ($id: ID!) { user(id: $id) { id } }' },
  { name: 'a null for a non-null variable', query: 'query ($id: ID!) { user(id: $id) { id } }', variables: { id: null } },
  { name: 'a cursor from elsewhere', query: '{ postsConnection(first: 2, after: "bm9wZQ") { totalCount } }' },
  // 6 users × 3 posts with their authors is 42 nodes: a second run charged on top of the first would be 84 > 60.
  { name: 'near the node budget, with an error (the re-run is charged as the only run)', query: '{ users(limit: 6) { posts { author { id } } } currentUser { id } }' },
  { name: 'over the node budget', query: '{ a: users(limit: 6) { posts { author { posts { id } } } } }' },
];

async function answer(app: FastifyInstance, testCase: Case) {
  const { query, variables, operationName } = testCase;
  const response = await app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: { query, variables, operationName } });
  return { status: response.statusCode, body: response.body };
}

async function answeredBy(app: FastifyInstance): Promise<Record<string, number>> {
  const response = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const counts: Record<string, number> = {};
  for (const [, executor, count] of response.body.matchAll(/^graphql_compiled_executions_total\{answered_by="([^"]+)"\} (\d+)$/gm)) counts[executor!] = Number(count);
  return counts;
}

describe('compiled execution answers as graphql-js does', () => {
  it.each(successes.map((c) => [c.name, c] as const))('%s', async (_name, testCase) => {
    const expected = await answer(reference, testCase);
    // No error on either side (each column a selection reads was loaded, graphql/selection.ts), and the same answer.
    expect(expected.body).not.toContain('"errors"');
    // Twice: the first run compiles, the second runs the kept function.
    expect(await answer(compiled, testCase)).toEqual(expected);
    expect(await answer(compiled, testCase)).toEqual(expected);
  });

  it.each(failures.map((c) => [c.name, c] as const))('%s', async (_name, testCase) => {
    const expected = await answer(reference, testCase);
    expect(expected.body).toContain('"errors"');
    expect(await answer(compiled, testCase)).toEqual(expected);
    expect(await answer(compiled, testCase)).toEqual(expected);
  });

  it('sends the compiled answer when it has no error, and graphql-js’s when it has one', async () => {
    const before = await answeredBy(compiled);
    const good = await answer(compiled, successes.find((c) => c.name === 'a nested read')!);
    const afterGood = await answeredBy(compiled);
    expect(good.status).toBe(200);
    expect((afterGood.compiled ?? 0) - (before.compiled ?? 0)).toBe(1);
    expect(afterGood['graphql-js'] ?? 0).toBe(before['graphql-js'] ?? 0);

    await answer(compiled, failures.find((c) => c.name.startsWith('a non-null root field'))!);
    const afterBad = await answeredBy(compiled);
    expect((afterBad['graphql-js'] ?? 0) - (afterGood['graphql-js'] ?? 0)).toBe(1);
  });

  it('never compiles a mutation: it runs once, on graphql-js', async () => {
    const before = await answeredBy(compiled);
    const created = await answer(compiled, { name: 'signup', query: 'mutation { createUser(input: { name: "Once", email: "once@example.com" }) { id } }' });
    expect(created.status).toBe(200);
    expect(await compiled.db.prisma.user.count({ where: { email: 'once@example.com' } })).toBe(1);
    expect(await answeredBy(compiled)).toEqual(before);
  });
});
