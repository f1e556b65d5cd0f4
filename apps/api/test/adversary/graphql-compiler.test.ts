// Attack: turn GraphQL's compiled execution (graphql-jit, graphql/acceleration/compiled-execution.ts) against the server: run code
// through the source it generates, get a wrong answer without an error, or make compiling itself the expensive part.
// Found by two attacker's reviews; each document below is answered exactly as graphql-js answers it, nothing runs, and
// the compiler is not used where it could be abused (the metrics say which executor answered).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { parse } from 'graphql';
import { compilableQuery, MAX_COMPILED_FIELDS } from '../../src/graphql/acceleration/compiled-execution.js';
import { answer, answeredBy, executorPair, twice, type ExecutorPair, type GraphQLCase } from '../support/executors.js';

let pair: ExecutorPair;
let compiled: FastifyInstance;
let reference: FastifyInstance;
const PWNED = '__compiledExecutionPwned';
const pwned = () => (globalThis as Record<string, unknown>)[PWNED];

beforeAll(async () => {
  pair = await executorPair(60);
  ({ compiled, reference } = pair);
}, 60_000);
afterAll(() => pair?.close());

/** `attack` answered by the compiled app as by graphql-js (sent twice: the first would compile), and which executor ran it. */
async function alike(attack: GraphQLCase) {
  const expected = await answer(reference, attack);
  const { answers, compiledRuns, reRuns } = await twice(compiled, attack);
  expect(answers).toEqual([expected, expected]);
  return { expected, compiledRuns, reRuns };
}

// graphql-jit writes literal arguments into the source it compiles, and turns a string of its marker form into code.
const marker = (code: string) => `__MAGIC_DATE__33a9e76d_02e0_4128_8e92_3530ad3da74d((globalThis.${PWNED} = ${code}), 0)`;

describe('code injection through the generated source', () => {
  it('a marker string as a literal argument: not compiled, nothing runs, nothing leaks', async () => {
    const { expected, compiledRuns } = await alike({ name: 'literal', query: `{ __typename user(id: "${marker('process.version')}") { id } }` });
    expect(compiledRuns).toBe(0);
    expect(pwned()).toBeUndefined();
    expect(expected.body).not.toContain(process.version);
  });

  it('the same string as a variable reaches the compiled function as a value, never as code', async () => {
    const { compiledRuns } = await alike({ name: 'variable', query: 'query ($id: ID!) { user(id: $id) { id } }', variables: { id: marker('1') } });
    expect(compiledRuns).toBe(2);
    expect(pwned()).toBeUndefined();
  });

  it('marker strings stored through a mutation and read back by a compiled query are plain text', async () => {
    const names = [marker('2'), '__MAGIC_NAN__57f286b9_4c20_487f_b409_79804ddcb4f8', 'x"); globalThis.' + PWNED + ' = 3; ("'];
    for (const app of [compiled, reference]) {
      for (const [index, name] of names.entries()) {
        const created = await answer(app, {
          name: 'create',
          query: 'mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }',
          variables: { input: { name, email: `marker${index}@example.com` } },
        });
        expect(created.status).toBe(200);
      }
    }
    const { expected, compiledRuns } = await alike({ name: 'read back', query: '{ users(limit: 20) { id name } }' });
    expect(compiledRuns).toBe(2);
    for (const name of names) expect(JSON.parse(expected.body).data.users.map((user: { name: string }) => user.name)).toContain(name);
    expect(pwned()).toBeUndefined();
  });

  it('a marker graphql-jit reads as NaN (a cursor): the same refusal as graphql-js', async () => {
    const { expected } = await alike({
      name: 'NaN cursor',
      query: '{ postsConnection(first: 2, after: "__MAGIC_NAN__57f286b9_4c20_487f_b409_79804ddcb4f8") { totalCount } }',
    });
    expect(expected.body).toContain('"errors"');
  });

  it('an enum literal of the marker form is never compiled (no such argument today; the guard holds for any schema)', () => {
    expect(compilableQuery(parse('{ users(limit: __MAGIC_NAN__57f286b9_4c20_487f_b409_79804ddcb4f8) { id } }'))).toBeUndefined();
    expect(compilableQuery(parse('{ users(limit: 3) { id } }'))?.fields).toBe(2);
  });
});

describe('a wrong answer without an error', () => {
  it('an alias that spells another field’s generated name (posts_idx0_users): not compiled, answered alike', async () => {
    const { expected, compiledRuns, reRuns } = await alike({
      name: 'collision',
      query: 'query ($id: ID!) { users(limit: 1) { posts { id title } } posts_idx0_users: user(id: $id) { id } }',
      variables: { id: '2' },
    });
    // Not even tried: compiled, the posts resolver was given the alias's resolve info (read `id` alone: an error, re-run).
    expect({ compiledRuns, reRuns }).toEqual({ compiledRuns: 0, reRuns: 0 });
    expect(expected.body).not.toContain('"errors"');
  });

  it('@skip/@include on merged fields and shared fragments, and a __proto__ alias: not compiled, answered alike', async () => {
    const attacks: GraphQLCase[] = [
      { name: 'skip', query: 'query ($id: ID!, $s: Boolean!) { user(id: $id) { name @skip(if: $s) id name } }', variables: { id: '1', s: true } },
      {
        name: 'fragment',
        query:
          'query ($a: ID!, $b: ID!, $x: Boolean!) { a: user(id: $a) { ...F @include(if: $x) } b: user(id: $b) { ...F } } fragment F on User { name }',
        variables: { a: '1', b: '2', x: false },
      },
      { name: 'proto', query: 'query ($id: ID!) { user(id: $id) { __proto__: name id } }', variables: { id: '1' } },
    ];
    for (const attack of attacks) expect((await alike(attack)).compiledRuns).toBe(0);
  });

  it('a batch sharing one work budget (an erroring operation beside a large one): never compiled, answered alike', async () => {
    const batch = [
      { query: '{ users(limit: 6) { posts { id } } currentUser { id } }' },
      { query: '{ users(limit: 6) { posts { author { id } } } }' },
    ];
    const send = (app: FastifyInstance) =>
      app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: batch });
    const before = await answeredBy(compiled);
    const [mine, theirs] = [await send(compiled), await send(reference)];
    // Which of the two concurrent operations crosses the budget first depends on the database's timing (it differs
    // between runs of graphql-js alone): both answers stop one of them, and none was compiled.
    expect(mine.statusCode).toBe(theirs.statusCode);
    for (const body of [mine.body, theirs.body]) expect(body).toContain('QUERY_TOO_COMPLEX');
    expect(await answeredBy(compiled)).toEqual(before);
  });
});

describe('compiling as the expensive part', () => {
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
    expect((await alike({ name: 'compile bomb', query: `{ __schema { queryType { ...A1 } } } ${fragments.join(' ')}` })).compiledRuns).toBe(0);
  });

  it(`a query over ${MAX_COMPILED_FIELDS} fields once its fragments are expanded: answered, not compiled`, async () => {
    // Ten spreads of a fragment that spreads another ten times: 541 fields expanded, from a document of 40.
    const ten = (name: string) => Array.from({ length: 10 }, () => `...${name}`).join(' ');
    const query = `query ($id: ID!) { user(id: $id) { ${ten('L1')} } }
      fragment L1 on User { id name posts { author { ${ten('L2')} } } }
      fragment L2 on User { id name posts { id title } }`;
    const { expected, compiledRuns } = await alike({ name: 'wide', query, variables: { id: '1' } });
    expect(expected.body).not.toContain('"errors"');
    expect(compiledRuns).toBe(0);
  });

  it('ever new documents: the process compiles a bounded number, graphql-js answers the rest alike', async () => {
    const flooded = await executorPair(60, { afterExecutions: 1, compileBurst: 3, compilesPerSecond: 0.001 });
    try {
      const documents = Array.from({ length: 12 }, (_, i) => ({ name: `flood ${i}`, query: `{ users(limit: ${i + 1}) { id name } }` }));
      let compiledRuns = 0;
      for (const document of documents) {
        const expected = await answer(flooded.reference, document);
        const runs = await twice(flooded.compiled, document);
        expect(runs.answers).toEqual([expected, expected]);
        compiledRuns += runs.compiledRuns;
      }
      // Three documents compiled (each answered twice by its compiled function), the other nine by graphql-js.
      expect(compiledRuns).toBe(6);
    } finally {
      await flooded.close();
    }
  });
});
