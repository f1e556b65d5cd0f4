// Compiled execution (graphql/acceleration/compiled-execution.ts) answers exactly as graphql-js does: the same status and body for
// every query shape and every error path; the compiled answer is used only for the plain shapes it is made for (the
// metrics say which executor answered). The attacks on its compiler are in adversary/graphql-compiler.test.ts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { answer, executorPair, twice, type ExecutorPair, type GraphQLCase as Case } from '../support/executors.js';

let pair: ExecutorPair;
let compiled: FastifyInstance;
let reference: FastifyInstance;
/** Small enough that a query can come near it: a re-run charged on top of the compiled run would go over. */
const MAX_NODES = 60;

beforeAll(async () => {
  pair = await executorPair(MAX_NODES);
  ({ compiled, reference } = pair);
}, 60_000);
afterAll(() => pair?.close());

/** Plain shapes: compiled, and answered by the compiled function. */
const compiledCases: Case[] = [
  { name: 'a user by id (a variable)', query: 'query ($id: ID!) { user(id: $id) { id name email age role createdAt } }', variables: { id: '2' } },
  { name: 'a nested read', query: '{ users(limit: 3) { id name posts { id title author { name } } } }' },
  {
    name: 'every field of nested posts (each read column)',
    query: '{ users(limit: 2) { posts { id title content createdAt author { id name createdAt } } } }',
  },
  {
    name: 'nested posts asked for through fragments only',
    query: '{ users(limit: 2) { posts { ...P ... on Post { createdAt } } } } fragment P on Post { title }',
  },
  { name: 'an id that is no number (null, no error)', query: 'query ($id: ID!) { user(id: $id) { id } }', variables: { id: 'abc' } },
  { name: 'a missing user (null, no error)', query: 'query ($id: ID!) { user(id: $id) { id } }', variables: { id: '999' } },
  { name: 'an ID given as a number', query: 'query ($id: ID!) { user(id: $id) { id } }', variables: { id: 4 } },
  {
    name: 'aliases of one field',
    query: 'query ($a: ID!, $b: ID!) { a: user(id: $a) { name } b: user(id: $b) { n: name } }',
    variables: { a: '1', b: '2' },
  },
  { name: 'named and inline fragments', query: 'query { users(limit: 2) { ...U posts { ... on Post { id } } } } fragment U on User { id name }' },
  {
    name: 'fields merged across fragments',
    query: '{ users(limit: 1) { id ... on User { id name } ...F } } fragment F on User { name posts { id } }',
  },
  { name: '__typename at every level', query: '{ __typename users(limit: 1) { __typename posts { __typename author { __typename } } } }' },
  { name: 'variables', query: 'query ($id: ID!, $n: Int) { user(id: $id) { name } users(limit: $n) { id } }', variables: { id: '3', n: 2 } },
  { name: 'a variable defaulted', query: 'query ($n: Int = 2) { posts(limit: $n) { id } }' },
  { name: 'an operation named by operationName', query: 'query Stats { statistics { totalUsers totalPosts } }', operationName: 'Stats' },
  {
    name: 'a connection page',
    query:
      '{ postsConnection(first: 2) { totalCount edges { cursor node { id title } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }',
  },
  {
    name: 'a connection page after a cursor (a variable)',
    query: 'query ($after: String) { postsConnection(first: 2, after: $after) { edges { node { id } } } }',
    variables: { after: null },
  },
  { name: 'the most recent posts', query: '{ recentPosts(limit: 3) { id author { id } } }' },
];

/** Shapes left to graphql-js (the reasons are in compiled-execution.ts): answered alike, never by a compiled function. */
const referenceCases: Case[] = [
  { name: 'a string literal argument', query: '{ user(id: "2") { id name } }' },
  {
    name: 'introspection',
    query: '{ __schema { queryType { name } types { name kind } } __type(name: "User") { fields { name type { kind ofType { name } } } } }',
  },
  {
    name: '@skip on a field merged with the same field',
    query: 'query ($id: ID!, $s: Boolean!) { user(id: $id) { name @skip(if: $s) id name } }',
    variables: { id: '1', s: true },
  },
  {
    name: 'a fragment included in one place only',
    query:
      'query ($a: ID!, $b: ID!, $x: Boolean!) { a: user(id: $a) { ...F @include(if: $x) } b: user(id: $b) { ...F } } fragment F on User { name }',
    variables: { a: '1', b: '2', x: false },
  },
  {
    name: 'a skipped parent beside the same field',
    query: 'query ($id: ID!, $s: Boolean!) { user(id: $id) @skip(if: $s) { ...F } user(id: $id) { name } } fragment F on User { email }',
    variables: { id: '1', s: true },
  },
  { name: 'an alias named __proto__', query: 'query ($id: ID!) { user(id: $id) { __proto__: name id } }', variables: { id: '1' } },
  { name: 'two operations (one picked)', query: 'query A { statistics { totalUsers } } query B { statistics { totalPosts } }', operationName: 'B' },
  { name: 'an optional variable not given', query: 'query ($n: Int) { posts(limit: $n) { id } }' },
  { name: 'an alias with an underscore', query: '{ users(limit: 2) { first_name: name } }' },
  { name: 'a variable named like an Object.prototype member, not given', query: 'query ($constructor: Int) { posts(limit: $constructor) { id } }' },
];

const failures: Case[] = [
  { name: 'a non-null root field that fails (data: null)', query: '{ statistics { totalUsers } currentUser { id } }' },
  {
    name: 'an invalid argument beside a good field (partial data)',
    query: 'query ($id: ID!) { user(id: $id) { name } posts(limit: -1) { id } }',
    variables: { id: '1' },
  },
  { name: 'an Int given as a numeric string (refused)', query: 'query ($n: Int) { posts(limit: $n) { id } }', variables: { n: '2' } },
  { name: 'a variable of the wrong type', query: 'query ($n: Int) { users(limit: $n) { id } }', variables: { n: 'x' } },
  { name: 'a required variable missing', query: 'query ($id: ID!) { user(id: $id) { id } }' },
  { name: 'a null for a non-null variable', query: 'query ($id: ID!) { user(id: $id) { id } }', variables: { id: null } },
  {
    name: 'a cursor from elsewhere',
    query: 'query ($after: String) { postsConnection(first: 2, after: $after) { totalCount } }',
    variables: { after: 'bm9wZQ' },
  },
  // 6 users × 3 posts with their authors is 42 nodes: a second run charged on top of the first would be 84 > 60.
  {
    name: 'near the node budget, with an error (the re-run is charged as the only run)',
    query: '{ users(limit: 6) { posts { author { id } } } currentUser { id } }',
  },
  { name: 'over the node budget', query: '{ a: users(limit: 6) { posts { author { posts { id } } } } }' },
];

describe('compiled execution answers as graphql-js does', () => {
  it.each(compiledCases.map((c) => [c.name, c] as const))('%s (compiled)', async (_name, testCase) => {
    const expected = await answer(reference, testCase);
    // No error (each column a selection reads was loaded, graphql/schema/selection.ts), and the same answer from the compiled function.
    expect(expected.body).not.toContain('"errors"');
    const { answers, compiledRuns, reRuns } = await twice(compiled, testCase);
    expect(answers).toEqual([expected, expected]);
    expect({ compiledRuns, reRuns }).toEqual({ compiledRuns: 2, reRuns: 0 });
  });

  it.each(referenceCases.map((c) => [c.name, c] as const))('%s (graphql-js)', async (_name, testCase) => {
    const expected = await answer(reference, testCase);
    const { answers, compiledRuns, reRuns } = await twice(compiled, testCase);
    expect(answers).toEqual([expected, expected]);
    expect({ compiledRuns, reRuns }).toEqual({ compiledRuns: 0, reRuns: 0 });
  });

  it.each(failures.map((c) => [c.name, c] as const))('%s (an error: graphql-js’s answer)', async (_name, testCase) => {
    const expected = await answer(reference, testCase);
    expect(expected.body).toContain('"errors"');
    const { answers, compiledRuns } = await twice(compiled, testCase);
    expect(answers).toEqual([expected, expected]);
    expect(compiledRuns).toBe(0);
  });

  it('never compiles a mutation: it runs once, on graphql-js', async () => {
    const { answers, compiledRuns, reRuns } = await twice(compiled, {
      name: 'signup',
      query: 'mutation ($email: String!) { createUser(input: { name: "Once", email: $email }) { id } }',
      variables: { email: 'once@example.com' },
    });
    expect(answers[0]!.status).toBe(200);
    expect(await compiled.db.prisma.user.count({ where: { email: 'once@example.com' } })).toBe(1);
    expect({ compiledRuns, reRuns }).toEqual({ compiledRuns: 0, reRuns: 0 });
  });
});
