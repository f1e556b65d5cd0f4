// The read side of the GraphQL contract through the real /graphql route: users, user, posts, post, relations.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { createTestApp } from '../support/app.js';
import { seedUsersWithPosts, type Fixture } from '../support/fixtures.js';
import { graphql } from '../support/graphql.js';

let app: FastifyInstance;
let fixture: Fixture;

beforeAll(async () => {
  app = await createTestApp();
  fixture = await seedUsersWithPosts(app.db.prisma, 3, 2);
});
afterAll(() => app.close());

describe('Query.users', () => {
  it('answers the foundation query with every user and their posts', async () => {
    const result = await graphql<{ users: { id: string; name: string; posts: { title: string }[] }[] }>(app, '{ users { id name posts { title } } }');
    expect(result.status).toBe(200);
    expect(result.errors).toBeUndefined();
    expect(result.data?.users).toEqual(
      fixture.users.map((user) => ({
        id: String(user.id),
        name: user.name,
        posts: fixture.posts.filter((post) => post.authorId === user.id).map((post) => ({ title: post.title })),
      })),
    );
  });

  it('pages with limit and offset in id order', async () => {
    const result = await graphql<{ users: { id: string }[] }>(app, '{ users(limit: 1, offset: 1) { id } }');
    expect(result.data?.users).toEqual([{ id: String(fixture.users[1]!.id) }]);
  });

  it.each([
    ['limit: 0', 'limit'],
    ['limit: 101', 'limit'],
    ['offset: -1', 'offset'],
  ])('rejects %s as BAD_USER_INPUT naming the argument', async (args, field) => {
    const result = await graphql(app, `{ users(${args}) { id } }`);
    expect(result.data).toBeNull();
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [expect.objectContaining({ field })] });
  });
});

describe('Query.user', () => {
  it('returns one user with role, age and an ISO createdAt', async () => {
    const target = fixture.users[0]!;
    const result = await graphql<{ user: Record<string, unknown> }>(
      app,
      'query One($id: ID!) { user(id: $id) { id name email age role createdAt } }',
      { id: String(target.id) },
    );
    // Anonymous: the e-mail reads "" (SPEC §3.1; email-privacy.test.ts walks every shape).
    expect(result.data?.user).toMatchObject({ id: String(target.id), name: target.name, email: '', age: target.age, role: 'ADMIN' });
    expect(new Date(result.data?.user.createdAt as string).toISOString()).toBe(result.data?.user.createdAt);
  });

  it.each(['999999', 'abc', '0', '-1', '1.5', '99999999999999999999'])('gives null without an error for id %p', async (id) => {
    const result = await graphql(app, 'query One($id: ID!) { user(id: $id) { id } }', { id });
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({ user: null });
  });
});

describe('Query.posts and Query.post', () => {
  it('lists posts with their authors', async () => {
    const result = await graphql<{ posts: { id: string; author: { id: string } }[] }>(app, '{ posts { id author { id } } }');
    expect(result.data?.posts).toEqual(fixture.posts.map((post) => ({ id: String(post.id), author: { id: String(post.authorId) } })));
  });

  it('reads one post, and null for an unknown one', async () => {
    const post = fixture.posts[3]!;
    const found = await graphql<{ post: { title: string } | null }>(app, `{ post(id: ${post.id}) { title } }`);
    expect(found.data?.post).toEqual({ title: post.title });
    const missing = await graphql<{ post: null }>(app, '{ post(id: "424242") { title } }');
    expect(missing.data?.post).toBeNull();
  });
});

describe('GraphQL over HTTP', () => {
  it('answers GET queries', async () => {
    const response = await app.inject({
      method: 'GET',
      url: `/graphql?query=${encodeURIComponent('{ users { id } }')}`,
      headers: { accept: 'application/json' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().data.users).toHaveLength(fixture.users.length);
  });

  it("refuses a GET whose variables or extensions are not JSON as the client's error (400, the parameter named), under both JSON types", async () => {
    const query = encodeURIComponent('query One($id: ID!) { user(id: $id) { id } }');
    for (const [parameter, accept] of [
      ['variables', 'application/json'],
      ['variables', 'application/graphql-response+json'],
      ['extensions', 'application/json'],
    ] as const) {
      const response = await app.inject({ method: 'GET', url: `/graphql?query=${query}&${parameter}=%7Bnot-json`, headers: { accept } });
      const body = response.json<{ errors: { message: string; extensions: Record<string, unknown> }[] }>();
      expect({ parameter, accept, status: response.statusCode, code: body.errors[0]?.extensions.code, message: body.errors[0]?.message }).toEqual({
        parameter,
        accept,
        status: 400,
        code: 'BAD_USER_INPUT',
        message: `The ${parameter} parameter is not JSON`,
      });
      expect(body.errors[0]?.extensions.fields).toEqual([{ field: parameter, message: expect.stringMatching(/^must be JSON text/) }]);
      // Yoga's own transport detail stays out of the answer.
      expect(body.errors[0]?.extensions).not.toHaveProperty('http');
    }
  });

  it('serves GraphiQL to browsers', async () => {
    const response = await app.inject({ method: 'GET', url: '/graphql', headers: { accept: 'text/html' } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/html');
    expect(response.body).toContain('GraphiQL');
    // It opens with a query that answers, and says how to send a token.
    expect(response.body).toContain('query Users');
    expect(response.body).toContain('Authorization');
  });

  it('reports a syntax error as GRAPHQL_PARSE_FAILED', async () => {
    const result = await graphql(app, '{ users { id ');
    expect(result.status).toBe(400);
    expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
  });

  it('reports an unknown field as GRAPHQL_VALIDATION_FAILED', async () => {
    const result = await graphql(app, '{ users { id password } }');
    expect(result.status).toBe(400);
    expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('rejects a variable of the wrong type', async () => {
    const result = await graphql(app, 'query One($id: ID!) { user(id: $id) { id } }', { id: { nested: true } });
    expect(result.status).toBe(400);
    expect(result.errors?.[0]?.message).toMatch(/\$id/);
  });
});
