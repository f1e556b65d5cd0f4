// Compiled execution (graphql/compiled-execution.ts) answers exactly as graphql-js does: the same status and body for
// every query shape and every error path; the compiled answer is used only for the plain shapes it is made for (the
// metrics say which executor answered), and the attacks an attacker's review found against graphql-jit get nowhere.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { MAX_COMPILED_FIELDS } from '../src/graphql/compiled-execution.js';
import { DEFAULT_GRAPHQL_LIMITS } from '../src/graphql/limits.js';
import { createTestApp } from './support/app.js';
import { seedUsersWithPosts } from './support/fixtures.js';

let compiled: FastifyInstance;
let reference: FastifyInstance;
const METRICS_TOKEN = 'test-metrics-token-0123456789';
/** Small enough that a query can come near it: a re-run charged on top of the compiled run would go over. */
const MAX_NODES = 60;
const PWNED = '__compiledExecutionPwned';

beforeAll(async () => {
  const graphqlLimits = { ...DEFAULT_GRAPHQL_LIMITS, maxNodes: MAX_NODES };
  compiled = await createTestApp({ graphqlCompiledExecution: { afterExecutions: 1 }, graphqlLimits });
  reference = await createTestApp({ graphqlCompiledExecution: false, graphqlLimits });
  for (const app of [compiled, reference]) {
    // The same rows in both (fresh databases: the same ids), and the same timestamps, so that answers compare.
    await seedUsersWithPosts(app.db.prisma, 6, 3);
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

/** Plain shapes: compiled, and answered by the compiled function. */
const compiledCases: Case[] = [
  { name: 'a user by id (a variable)', query: 'query ($id: ID!) { user(id: $id) { id name email age role createdAt } }', variables: { id: '2' } },
  { name: 'a nested read', query: '{ users(limit: 3) { id name posts { id title author { name } } } }' },
  { name: 'every field of nested posts (each read column)', query: '{ users(limit: 2) { posts { id title content createdAt author { id name createdAt } } } }' },
  { name: 'nested posts asked for through fragments only', query: '{ users(limit: 2) { posts { ...P ... on Post { createdAt } } } } fragment P on Post { title }' },
  { name: 'an id that is no number (null, no error)', query: 'query ($id: ID!) { user(id: $id) { id } }', variables: { id: 'abc' } },
  { name: 'a missing user (null, no error)', query: 'query ($id: ID!) { user(id: $id) { id } }', variables: { id: '999' } },
  { name: 'an ID given as a number', query: 'query ($id: ID!) { user(id: $id) { id } }', variables: { id: 4 } },
  { name: 'aliases of one field', query: 'query ($a: ID!, $b: ID!) { a: user(id: $a) { name } b: user(id: $b) { n: name } }', variables: { a: '1', b: '2' } },
  { name: 'named and inline fragments', query: 'query { users(limit: 2) { ...U posts { ... on Post { id } } } } fragment U on User { id name }' },
  { name: 'fields merged across fragments', query: '{ users(limit: 1) { id ... on User { id name } ...F } } fragment F on User { name posts { id } }' },
  { name: '__typename at every level', query: '{ __typename users(limit: 1) { __typename posts { __typename author { __typename } } } }' },
  { name: 'variables', query: 'query ($id: ID!, $n: Int) { user(id: $id) { name } users(limit: $n) { id } }', variables: { id: '3', n: 2 } },
  { name: 'a variable defaulted', query: 'query ($n: Int = 2) { posts(limit: $n) { id } }' },
  { name: 'an operation named by operationName', query: 'query Stats { statistics { totalUsers totalPosts } }', operationName: 'Stats' },
  { name: 'a connection page', query: '{ postsConnection(first: 2) { totalCount edges { cursor node { id title } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }' },
  { name: 'a connection page after a cursor (a variable)', query: 'query ($after: String) { postsConnection(first: 2, after: $after) { edges { node { id } } } }', variables: { after: null } },
  { name: 'the most recent posts', query: '{ recentPosts(limit: 3) { id author { id } } }' },
];

/** Shapes left to graphql-js (the reasons are in compiled-execution.ts): answered alike, never by a compiled function. */
const referenceCases: Case[] = [
  { name: 'a string literal argument', query: '{ user(id: "2") { id name } }' },
  { name: 'introspection', query: '{ __schema { queryType { name } types { name kind } } __type(name: "User") { fields { name type { kind ofType { name } } } } }' },
  { name: '@skip on a field merged with the same field', query: 'query ($id: ID!, $s: Boolean!) { user(id: $id) { name @skip(if: $s) id name } }', variables: { id: '1', s: true } },
  { name: 'a fragment included in one place only', query: 'query ($a: ID!, $b: ID!, $x: Boolean!) { a: user(id: $a) { ...F @include(if: $x) } b: user(id: $b) { ...F } } fragment F on User { name }', variables: { a: '1', b: '2', x: false } },
  { name: 'a skipped parent beside the same field', query: 'query ($id: ID!, $s: Boolean!) { user(id: $id) @skip(if: $s) { ...F } user(id: $id) { name } } fragment F on User { email }', variables: { id: '1', s: true } },
  { name: 'an alias named __proto__', query: 'query ($id: ID!) { user(id: $id) { __proto__: name id } }', variables: { id: '1' } },
  { name: 'two operations (one picked)', query: 'query A { statistics { totalUsers } } query B { statistics { totalPosts } }', operationName: 'B' },
  { name: 'an optional variable not given', query: 'query ($n: Int) { posts(limit: $n) { id } }' },
];

const failures: Case[] = [
  { name: 'a non-null root field that fails (data: null)', query: '{ statistics { totalUsers } currentUser { id } }' },
  { name: 'an invalid argument beside a good field (partial data)', query: 'query ($id: ID!) { user(id: $id) { name } posts(limit: -1) { id } }', variables: { id: '1' } },
  { name: 'an Int given as a numeric string (refused)', query: 'query ($n: Int) { posts(limit: $n) { id } }', variables: { n: '2' } },
  { name: 'a variable of the wrong type', query: 'query ($n: Int) { users(limit: $n) { id } }', variables: { n: 'x' } },
  { name: 'a required variable missing', query: 'query ($id: ID!) { user(id: $id) { id } }' },
  { name: 'a null for a non-null variable', query: 'query ($id: ID!) { user(id: $id) { id } }', variables: { id: null } },
  { name: 'a cursor from elsewhere', query: 'query ($after: String) { postsConnection(first: 2, after: $after) { totalCount } }', variables: { after: 'bm9wZQ' } },
  // 6 users × 3 posts with their authors is 42 nodes: a second run charged on top of the first would be 84 > 60.
  { name: 'near the node budget, with an error (the re-run is charged as the only run)', query: '{ users(limit: 6) { posts { author { id } } } currentUser { id } }' },
  { name: 'over the node budget', query: '{ a: users(limit: 6) { posts { author { posts { id } } } } }' },
];

async function answer(app: FastifyInstance, testCase: Case) {
  const { query, variables, operationName } = testCase;
  const response = await app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: { query, variables, operationName } });
  return { status: response.statusCode, body: response.body };
}

async function answeredBy(app: FastifyInstance): Promise<{ compiled: number; graphqlJs: number }> {
  const response = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const count = (executor: string) => Number(new RegExp(`^graphql_compiled_executions_total\\{answered_by="${executor}"\\} (\\d+)$`, 'm').exec(response.body)?.[1] ?? 0);
  return { compiled: count('compiled'), graphqlJs: count('graphql-js') };
}

/** The compiled app's answer to `testCase` (sent twice: the first compiles) and which executors answered the two. */
async function twice(testCase: Case) {
  const before = await answeredBy(compiled);
  const answers = [await answer(compiled, testCase), await answer(compiled, testCase)];
  const after = await answeredBy(compiled);
  return { answers, compiledRuns: after.compiled - before.compiled, reRuns: after.graphqlJs - before.graphqlJs };
}

describe('compiled execution answers as graphql-js does', () => {
  it.each(compiledCases.map((c) => [c.name, c] as const))('%s (compiled)', async (_name, testCase) => {
    const expected = await answer(reference, testCase);
    // No error (each column a selection reads was loaded, graphql/selection.ts), and the same answer from the compiled function.
    expect(expected.body).not.toContain('"errors"');
    const { answers, compiledRuns, reRuns } = await twice(testCase);
    expect(answers).toEqual([expected, expected]);
    expect({ compiledRuns, reRuns }).toEqual({ compiledRuns: 2, reRuns: 0 });
  });

  it.each(referenceCases.map((c) => [c.name, c] as const))('%s (graphql-js)', async (_name, testCase) => {
    const expected = await answer(reference, testCase);
    const { answers, compiledRuns, reRuns } = await twice(testCase);
    expect(answers).toEqual([expected, expected]);
    expect({ compiledRuns, reRuns }).toEqual({ compiledRuns: 0, reRuns: 0 });
  });

  it.each(failures.map((c) => [c.name, c] as const))('%s (an error: graphql-js’s answer)', async (_name, testCase) => {
    const expected = await answer(reference, testCase);
    expect(expected.body).toContain('"errors"');
    const { answers, compiledRuns } = await twice(testCase);
    expect(answers).toEqual([expected, expected]);
    expect(compiledRuns).toBe(0);
  });

  it('never compiles a mutation: it runs once, on graphql-js', async () => {
    const { answers, compiledRuns, reRuns } = await twice({ name: 'signup', query: 'mutation ($email: String!) { createUser(input: { name: "Once", email: $email }) { id } }', variables: { email: 'once@example.com' } });
    expect(answers[0]!.status).toBe(200);
    expect(await compiled.db.prisma.user.count({ where: { email: 'once@example.com' } })).toBe(1);
    expect({ compiledRuns, reRuns }).toEqual({ compiledRuns: 0, reRuns: 0 });
  });
});

describe('attacks on the compiler', () => {
  // graphql-jit writes literal arguments into the source it compiles, and turns a string of its marker form into code.
  const marker = (code: string) => `__MAGIC_DATE__33a9e76d_02e0_4128_8e92_3530ad3da74d((globalThis.${PWNED} = ${code}), 0)`;

  it('code injection through a string literal argument: not compiled, nothing runs, nothing leaks', async () => {
    const attack = { name: 'injection', query: `{ __typename user(id: "${marker('process.version')}") { id } }` };
    const expected = await answer(reference, attack);
    const { answers, compiledRuns } = await twice(attack);
    expect(answers).toEqual([expected, expected]);
    expect(compiledRuns).toBe(0);
    expect((globalThis as Record<string, unknown>)[PWNED]).toBeUndefined();
    expect(answers[1]!.body).not.toContain(process.version);
  });

  it('the same string as a variable reaches the compiled function as a value, never as code', async () => {
    const attack = { name: 'injection by variable', query: 'query ($id: ID!) { user(id: $id) { id } }', variables: { id: marker('1') } };
    const expected = await answer(reference, attack);
    const { answers, compiledRuns } = await twice(attack);
    expect(answers).toEqual([expected, expected]);
    expect(compiledRuns).toBe(2);
    expect((globalThis as Record<string, unknown>)[PWNED]).toBeUndefined();
  });

  it('a marker string that graphql-jit reads as NaN (a cursor): the same refusal as graphql-js', async () => {
    const attack = { name: 'NaN cursor', query: '{ postsConnection(first: 2, after: "__MAGIC_NAN__57f286b9_4c20_487f_b409_79804ddcb4f8") { totalCount } }' };
    const expected = await answer(reference, attack);
    expect(expected.body).toContain('"errors"');
    expect((await twice(attack)).answers).toEqual([expected, expected]);
  });

  it('a fragment chain that is cheap to run and exponential to compile (through introspection): not compiled', async () => {
    // Each level spreads the next three ways; graphql-jit inlines every spread (the review measured 3.3 s and 73 MB to
    // compile 20 levels, which run in 1.3 ms).
    const levels = 20;
    const fragments = Array.from({ length: levels }, (_, index) => {
      const i = index + 1;
      const next = i < levels ? (letter: string) => `{ ...${letter}${i + 1} }` : () => '{ name }';
      return [
        `fragment A${i} on __Type { name ofType ${next('A')} interfaces ${next('B')} possibleTypes ${next('B')} }`,
        i > 1 ? `fragment B${i} on __Type { name ofType ${next('B')} interfaces ${next('C')} possibleTypes ${next('C')} }` : '',
        i > 2 ? `fragment C${i} on __Type { name ofType ${next('C')} }` : '',
      ].join(' ');
    });
    const attack = { name: 'compile bomb', query: `{ __schema { queryType { ...A1 } } } ${fragments.join(' ')}` };
    const expected = await answer(reference, attack);
    const { answers, compiledRuns } = await twice(attack);
    expect(answers).toEqual([expected, expected]);
    expect(compiledRuns).toBe(0);
  });

  it(`a query over ${MAX_COMPILED_FIELDS} fields once its fragments are expanded: answered, not compiled`, async () => {
    // Ten spreads of a fragment that spreads another ten times: 541 fields expanded, from a document of 40.
    const ten = (name: string) => Array.from({ length: 10 }, () => `...${name}`).join(' ');
    const query = `query ($id: ID!) { user(id: $id) { ${ten('L1')} } }
      fragment L1 on User { id name posts { author { ${ten('L2')} } } }
      fragment L2 on User { id name posts { id title } }`;
    const attack = { name: 'wide', query, variables: { id: '1' } };
    const expected = await answer(reference, attack);
    expect(expected.body).not.toContain('"errors"');
    const { answers, compiledRuns } = await twice(attack);
    expect(answers).toEqual([expected, expected]);
    expect(compiledRuns).toBe(0);
  });

  it('a batch sharing one work budget (an erroring operation beside a large one): never compiled, answered alike', async () => {
    const batch = [{ query: '{ users(limit: 6) { posts { id } } currentUser { id } }' }, { query: '{ users(limit: 6) { posts { author { id } } } }' }];
    const send = (app: FastifyInstance) => app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: batch });
    const before = await answeredBy(compiled);
    const [mine, theirs] = [await send(compiled), await send(reference)];
    expect({ status: mine.statusCode, body: mine.body }).toEqual({ status: theirs.statusCode, body: theirs.body });
    expect(theirs.body).toContain('QUERY_TOO_COMPLEX');
    expect(await answeredBy(compiled)).toEqual(before);
  });
});
