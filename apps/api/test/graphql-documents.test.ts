// GraphQL documents as clients write them (fragments, aliases, @include/@skip, variables), and no internals in production.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { createTestApp } from './support/app.js';
import { seedUsersWithPosts, type Fixture } from './support/fixtures.js';
import { graphql } from './support/graphql.js';

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
      second: { id: String(second!.id), name: second!.name, email: second!.email },
    });
  });

  it('honours @include and @skip', async () => {
    const query = 'query Q($withPosts: Boolean!, $hideEmail: Boolean!) { users(limit: 1) { id email @skip(if: $hideEmail) posts @include(if: $withPosts) { title } } }';
    const lean = await graphql<{ users: Record<string, unknown>[] }>(app, query, { withPosts: false, hideEmail: true });
    expect(Object.keys(lean.data!.users[0]!)).toEqual(['id']);
    const full = await graphql<{ users: Record<string, unknown>[] }>(app, query, { withPosts: true, hideEmail: false });
    expect(Object.keys(full.data!.users[0]!)).toEqual(['id', 'email', 'posts']);
  });

  it('answers application/graphql-response+json and application/json alike', async () => {
    for (const accept of ['application/graphql-response+json', 'application/json']) {
      const response = await app.inject({ method: 'POST', url: '/graphql', headers: { accept }, payload: { query: '{ statistics { totalUsers } }' } });
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
