// Attack: hostile directive arguments (issue 40, STREAM-NEGATIVE-500). `@stream(initialCount: -1)` reached the
// executor's invariant: INTERNAL_SERVER_ERROR and a stack logged at error level. Now every directive the served schema
// accepts in a document, with every argument, is sent out-of-range, wrong-typed, null and huge values (as literals and
// as variables, over HTTP POST), and no answer is an internal error, and nothing is logged at error level.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { createAuthTestApp } from '../support/auth.js';
import { listen, wsClient } from '../support/ws.js';

let app: FastifyInstance;
let base: string;
const logged: { level: number; msg?: string }[] = [];
beforeAll(async () => {
  app = await createAuthTestApp({
    // The sweep sends a few hundred requests from one address: the default bucket would answer 429 to the rest.
    config: { logLevel: 'info', defaultRateLimit: { max: 100_000, windowMs: 60_000 } },
    logDestination: { write: (line: string) => void logged.push(JSON.parse(line)) },
  });
  await app.db.prisma.user.createMany({ data: ['dora', 'emil'].map((name) => ({ name, email: `${name}@example.com` })) });
  ({ http: base } = await listen(app));
}, 60_000);
afterAll(() => app.close());

interface Answer {
  status: number;
  text: string;
}

/** One POST as a browser client of incremental delivery sends it (any of the three answers allowed). */
async function post(query: string, variables?: Record<string, unknown>): Promise<Answer> {
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed, application/graphql-response+json, application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, text: await response.text() };
}

const codesIn = (text: string) => [...text.matchAll(/"code":"([A-Z_]+)"/g)].map((match) => match[1]);

describe('attack: @stream with a negative or null initialCount', () => {
  it.each([
    ['a literal -1', '{ users(limit: 3) @stream(initialCount: -1) { id } }', undefined, 'GRAPHQL_VALIDATION_FAILED'],
    ['a literal null', '{ users(limit: 3) @stream(initialCount: null) { id } }', undefined, 'GRAPHQL_VALIDATION_FAILED'],
    ['a variable -1', 'query ($n: Int) { users(limit: 3) @stream(initialCount: $n) { id } }', { n: -1 }, 'BAD_USER_INPUT'],
    ['a variable null', 'query ($n: Int) { users(limit: 3) @stream(initialCount: $n) { id } }', { n: null }, 'BAD_USER_INPUT'],
  ])('%s: refused as the client’s input before anything runs, nothing logged as an error', async (_name, query, variables, code) => {
    const before = logged.length;
    const answer = await post(query, variables);
    expect(answer.status).toBe(400);
    expect(codesIn(answer.text)).toEqual([code]);
    expect(answer.text).toMatch(/initialCount must be an integer of 0 or more/);
    expect(answer.text).not.toContain('"data"');
    expect(logged.slice(before).filter((line) => line.level >= 50)).toEqual([]);
  });

  it('over Server-Sent Events and the WebSocket as well: the client’s error, nothing logged as an error', async () => {
    const before = logged.length;
    const literal = '{ users(limit: 3) @stream(initialCount: -1) { id } }';
    const variable = 'query ($n: Int) { users(limit: 3) @stream(initialCount: $n) { id } }';
    for (const [query, variables] of [
      [literal, undefined],
      [variable, { n: -5 }],
    ] as const) {
      const sse = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query, variables }),
      });
      const text = await sse.text();
      expect(codesIn(text)).toEqual([variables ? 'BAD_USER_INPUT' : 'GRAPHQL_VALIDATION_FAILED']);
      const socket = wsClient(`${base.replace('http', 'ws')}/graphql`);
      const parts: unknown[] = [];
      try {
        for await (const part of socket.iterate({ query, ...(variables ? { variables } : {}) })) parts.push(part);
      } catch (error) {
        parts.push(error);
      } finally {
        await socket.dispose();
      }
      expect(JSON.stringify(parts)).toMatch(/initialCount must be an integer of 0 or more/);
      expect(JSON.stringify(parts)).not.toContain('INTERNAL_SERVER_ERROR');
    }
    expect(logged.slice(before).filter((line) => line.level >= 50)).toEqual([]);
  });

  it('a fragment only another operation of the document uses is not checked against this operation’s variables', async () => {
    const document =
      'fragment F on Post { id @include(if: $x) } query A($x: Boolean!) { posts(limit: 1) { ...F } } query B { posts(limit: 1) { id } }';
    const response = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query: document, operationName: 'B' }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { errors?: unknown }).errors).toBeUndefined();
  });

  it('initialCount 0 and 1 still stream, with the rest as parts', async () => {
    for (const count of [0, 1]) {
      const answer = await post(`{ users(limit: 3) @stream(initialCount: ${count}) { id } }`);
      expect(answer.status).toBe(200);
      expect(answer.text).toContain('"hasNext":false');
      expect(codesIn(answer.text)).toEqual([]);
    }
  });
});

interface IntrospectedType {
  kind: string;
  name: string | null;
  ofType: IntrospectedType | null;
}
interface IntrospectedDirective {
  name: string;
  locations: string[];
  args: { name: string; type: IntrospectedType; defaultValue: string | null }[];
}

/** Where each executable location is put in a document: `@D` stands for the directive with its arguments. */
const PLACES: Record<string, (directive: string, variables: string) => string> = {
  QUERY: (d, v) => `query Q${v} ${d} { users(limit: 2) { id } }`,
  FIELD: (d, v) => `query Q${v} { users(limit: 2) ${d} { id } }`,
  INLINE_FRAGMENT: (d, v) => `query Q${v} { users(limit: 2) { id ... ${d} { name } } }`,
  FRAGMENT_SPREAD: (d, v) => `query Q${v} { users(limit: 2) { id ...F ${d} } } fragment F on User { name }`,
  FRAGMENT_DEFINITION: (d, v) => `query Q${v} { users(limit: 2) { id ...F } } fragment F on User ${d} { name }`,
  MUTATION: (d, v) => `mutation M${v} ${d} { deleteUser(id: "0") }`,
  SUBSCRIPTION: (d, v) => `subscription S${v} ${d} { postCreated { id } }`,
  VARIABLE_DEFINITION: (d, v) => `query Q($unused: Int ${d}${v ? `, ${v.slice(1, -1)}` : ''}) { users(limit: 2) { id } }`,
};

const HUGE = 'x'.repeat(100 * 1024);
/** Literal values of every kind, in and out of range. */
const LITERALS = [
  '-1',
  '-2147483648',
  '2147483647',
  '2147483648',
  '1e10',
  '-0.5',
  '"x"',
  'null',
  'true',
  'FOO',
  '[1]',
  '{ a: 1 }',
  JSON.stringify(HUGE),
  '"a\\u0000b"',
];
/** Variable values of every kind, sent for a variable declared with the argument's type, and nullable. */
const VARIABLE_VALUES: unknown[] = [-1, -2147483648, 2147483647, 2147483648, 1e10, -0.5, 'x', null, true, [1], { a: 1 }, HUGE, 'a\u0000b'];

const typeName = (type: IntrospectedType): string =>
  type.kind === 'NON_NULL' ? `${typeName(type.ofType!)}!` : type.kind === 'LIST' ? `[${typeName(type.ofType!)}]` : type.name!;

describe('attack: every directive argument the served schema accepts, out of range, wrong-typed, null and huge', () => {
  it('no INTERNAL_SERVER_ERROR, no 5xx and no error-level log line, for each directive, location, argument and value', async () => {
    const introspection = await post(
      '{ __schema { directives { name locations args { name defaultValue type { kind name ofType { kind name ofType { kind name } } } } } } }',
    );
    const directives = (JSON.parse(introspection.text) as { data: { __schema: { directives: IntrospectedDirective[] } } }).data.__schema.directives;
    const executable = directives.filter((directive) => directive.locations.some((location) => location in PLACES));
    // The sweep covers what the schema serves, whatever it grows: at least the four of GraphQL and incremental delivery.
    expect(executable.map((directive) => directive.name)).toEqual(expect.arrayContaining(['include', 'skip', 'defer', 'stream']));
    const before = logged.length;
    const failures: string[] = [];
    let sent = 0;
    for (const directive of executable) {
      for (const location of directive.locations.filter((each) => each in PLACES)) {
        const place = PLACES[location]!;
        for (const argument of directive.args) {
          const attempts: [string, Record<string, unknown> | undefined][] = [
            ...LITERALS.map((literal): [string, undefined] => [place(`@${directive.name}(${argument.name}: ${literal})`, ''), undefined]),
          ];
          const declared = typeName(argument.type);
          for (const declaration of new Set([declared, declared.replace(/!$/, '')])) {
            for (const value of VARIABLE_VALUES) {
              attempts.push([place(`@${directive.name}(${argument.name}: $v)`, `($v: ${declaration})`), { v: value }]);
            }
          }
          for (const [query, variables] of attempts) {
            const answer = await post(query, variables);
            sent++;
            if (answer.status >= 500 || answer.text.includes('INTERNAL_SERVER_ERROR')) {
              failures.push(`${answer.status} ${query.slice(0, 160)} ${JSON.stringify(variables)?.slice(0, 60)}: ${answer.text.slice(0, 200)}`);
            }
          }
        }
      }
    }
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(200);
    expect(logged.slice(before).filter((line) => line.level >= 50)).toEqual([]);
    // The server still answers.
    expect((await post('{ users(limit: 1) { id } }')).status).toBe(200);
  }, 120_000);
});
