// GraphQL documents as clients write them (fragments, aliases, @include/@skip, variables), and no internals in production.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { createTestApp } from '../support/app.js';
import { seedUsersWithPosts, type Fixture } from '../support/fixtures.js';
import { graphql } from '../support/graphql.js';

let app: FastifyInstance;
let fixture: Fixture;

beforeAll(async () => {
  app = await createTestApp();
  fixture = await seedUsersWithPosts(app.db.prisma, 2, 1);
});
afterAll(() => app.close());

describe('documents', () => {
  it('resolves fragments, aliases and variables', async () => {
    const [first, second] = fixture.users;
    const result = await graphql(
      app,
      `fragment Card on User { id name }
       query Two($a: ID!, $b: ID!) { first: user(id: $a) { ...Card } second: user(id: $b) { ...Card email } }`,
      { a: String(first!.id), b: String(second!.id) },
    );
    expect(result.data).toEqual({
      first: { id: String(first!.id), name: first!.name },
      second: { id: String(second!.id), name: second!.name, email: '' }, // anonymous: "" (SPEC §3.1)
    });
  });

  it('honours @include and @skip', async () => {
    const query =
      'query Q($withPosts: Boolean!, $hideEmail: Boolean!) { users(limit: 1) { id email @skip(if: $hideEmail) posts @include(if: $withPosts) { title } } }';
    const lean = await graphql<{ users: Record<string, unknown>[] }>(app, query, { withPosts: false, hideEmail: true });
    expect(Object.keys(lean.data!.users[0]!)).toEqual(['id']);
    const full = await graphql<{ users: Record<string, unknown>[] }>(app, query, { withPosts: true, hideEmail: false });
    expect(Object.keys(full.data!.users[0]!)).toEqual(['id', 'email', 'posts']);
  });

  it('answers application/graphql-response+json and application/json alike', async () => {
    for (const accept of ['application/graphql-response+json', 'application/json']) {
      const response = await app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { accept },
        payload: { query: '{ statistics { totalUsers } }' },
      });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toContain(accept);
      expect(response.json()).toEqual({ data: { statistics: { totalUsers: 2 } } });
    }
  });
});

describe('production error masking', () => {
  it('hides internal messages and stacks behind INTERNAL_SERVER_ERROR', async () => {
    const production = await createTestApp({ nodeEnv: 'production' });
    await production.db.close(); // any resolver touching the database now fails internally
    const result = await graphql(production, '{ users { id } }');
    expect(result.errors).toHaveLength(1);
    const [error] = result.errors!;
    expect(error!.extensions?.code).toBe('INTERNAL_SERVER_ERROR');
    expect(JSON.stringify(result)).not.toMatch(/Database is closed|prisma|at .*\.ts|stack/i);
    await production.close();
  });
});

// Found by the bounded fuzz (fuzz.test.ts): Yoga's own request errors carried codes outside SPEC §2, and client errors that
// masking replaced (variable coercion, @auth failing at the root of a mutation) were logged as server errors.
describe('client errors', () => {
  let quiet: FastifyInstance;
  const errorLines: string[] = [];

  beforeAll(async () => {
    quiet = await createTestApp({ logLevel: 'error' });
    (quiet.log as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] = { write: (line: string) => void errorLines.push(line) };
  });
  afterAll(() => quiet.close());

  it('an operationName that picks no operation → BAD_USER_INPUT (was OPERATION_RESOLUTION_FAILURE)', async () => {
    const response = await quiet.inject({
      method: 'POST',
      url: '/graphql',
      payload: { query: 'query A { statistics { totalUsers } } query B { statistics { totalPosts } }', operationName: 'C' },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors.map((error: { extensions: { code: string } }) => error.extensions.code)).toEqual(['BAD_USER_INPUT']);
  });

  it('a mutation over GET → BAD_USER_INPUT (was BAD_REQUEST)', async () => {
    const response = await quiet.inject({
      method: 'GET',
      url: `/graphql?query=${encodeURIComponent('mutation { deleteUser(id: "1") }')}`,
      headers: { accept: 'application/json' },
    });
    expect(response.statusCode).toBe(405);
    expect(response.json().errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });

  it('are answered with their codes and not logged as server errors', async () => {
    const missing = await graphql(quiet, 'query ($id: ID!) { user(id: $id) { id } }');
    expect(missing.errors![0]!.extensions?.code).toBe('BAD_USER_INPUT');
    const anonymous = await graphql(quiet, 'mutation { _: deleteUser(id: "1") }');
    expect(anonymous.errors![0]!.extensions?.code).toBe('UNAUTHENTICATED');
    expect(errorLines).toEqual([]);
  });
});
