// GraphQL mutations and the remaining queries through /graphql: validation, ownership, conflicts — and nothing changes on refusal.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { useTestApp } from '../support/app.js';
import { graphql } from '../support/graphql.js';

const suite = useTestApp();

const CREATE_USER = 'mutation Create($input: CreateUserInput!) { createUser(input: $input) { id name email age role } }';
const UPDATE_USER = 'mutation Update($id: ID!, $input: UpdateUserInput!) { updateUser(id: $id, input: $input) { id name email age } }';
const CREATE_POST =
  'mutation Post($title: String!, $content: String!, $authorId: ID!) { createPost(title: $title, content: $content, authorId: $authorId) { id title author { id } createdAt } }';

describe('createUser (open sign-up)', () => {
  it('creates a USER with a lower-cased e-mail who can then log in', async () => {
    const result = await graphql<{ createUser: Record<string, unknown> }>(suite.app, CREATE_USER, {
      input: { name: 'Carol', email: 'Carol@Example.com', age: 30, password: 'carol-password' },
    });
    expect(result.errors).toBeUndefined();
    expect(result.data?.createUser).toEqual({ id: expect.any(String), name: 'Carol', email: 'carol@example.com', age: 30, role: 'USER' });
    const login = await suite.app.inject({ method: 'POST', url: '/login', payload: { email: 'carol@example.com', password: 'carol-password' } });
    expect(login.statusCode).toBe(200);
  });

  it('names every failing field with BAD_USER_INPUT and creates nothing', async () => {
    const before = await suite.app.db.prisma.user.count();
    const result = await graphql(suite.app, CREATE_USER, { input: { name: '', email: 'not-an-email', age: 151, password: 'short' } });
    expect(result.errors?.[0]?.extensions).toEqual({
      code: 'BAD_USER_INPUT',
      fields: [
        { field: 'name', message: expect.any(String) },
        { field: 'email', message: expect.any(String) },
        { field: 'age', message: expect.any(String) },
        { field: 'password', message: expect.any(String) },
      ],
    });
    expect(await suite.app.db.prisma.user.count()).toBe(before);
  });

  it('answers CONFLICT for an e-mail in use, whatever its case', async () => {
    const result = await graphql(suite.app, CREATE_USER, { input: { name: 'Again', email: 'ALICE@example.com' } });
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', fields: [{ field: 'email' }] });
  });

  it('does not accept a role (not in the input type)', async () => {
    const result = await graphql(suite.app, CREATE_USER, { input: { name: 'Mallory', email: 'mallory@example.com', role: 'ADMIN' } });
    expect(result.status).toBe(400);
    expect(await suite.app.db.prisma.user.count({ where: { email: 'mallory@example.com' } })).toBe(0);
  });
});

describe('updateUser', () => {
  it('lets a user change their own account', async () => {
    const result = await graphql(suite.app, UPDATE_USER, { id: String(suite.alice.id), input: { name: 'Alice B.', age: null } }, suite.alice.headers);
    expect(result.data).toEqual({ updateUser: { id: String(suite.alice.id), name: 'Alice B.', email: 'alice@example.com', age: null } });
  });

  it('refuses another user with FORBIDDEN and changes nothing', async () => {
    const result = await graphql(suite.app, UPDATE_USER, { id: String(suite.bob.id), input: { name: 'hacked' } }, suite.alice.headers);
    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await suite.app.db.prisma.user.findUniqueOrThrow({ where: { id: suite.bob.id } })).name).toBe('bob');
  });

  it('lets an ADMIN change anyone; NOT_FOUND for a missing user', async () => {
    const result = await graphql(suite.app, UPDATE_USER, { id: String(suite.bob.id), input: { email: 'Robert@example.com' } }, suite.admin.headers);
    expect(result.data).toMatchObject({ updateUser: { email: 'robert@example.com' } });
    const missing = await graphql(suite.app, UPDATE_USER, { id: '999999', input: { name: 'x' } }, suite.admin.headers);
    expect(missing.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('requires a login (UNAUTHENTICATED) and validates fields', async () => {
    expect((await graphql(suite.app, UPDATE_USER, { id: String(suite.alice.id), input: { name: 'x' } })).errors?.[0]?.extensions?.code).toBe(
      'UNAUTHENTICATED',
    );
    const invalid = await graphql(suite.app, UPDATE_USER, { id: String(suite.alice.id), input: { name: null, email: 'bad' } }, suite.alice.headers);
    expect(invalid.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'name' }, { field: 'email' }] });
  });
});

describe('createPost', () => {
  it('writes a post as the caller', async () => {
    const result = await graphql<{ createPost: { title: string; author: { id: string } } }>(
      suite.app,
      CREATE_POST,
      { title: 'Hello', content: 'World', authorId: String(suite.alice.id) },
      suite.alice.headers,
    );
    expect(result.data?.createPost).toMatchObject({ title: 'Hello', author: { id: String(suite.alice.id) } });
  });

  it('refuses writing as someone else (FORBIDDEN), allows it for an ADMIN', async () => {
    const before = await suite.app.db.prisma.post.count();
    const forbidden = await graphql(suite.app, CREATE_POST, { title: 'x', content: 'y', authorId: String(suite.bob.id) }, suite.alice.headers);
    expect(forbidden.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await suite.app.db.prisma.post.count()).toBe(before);
    const asAdmin = await graphql(
      suite.app,
      CREATE_POST,
      { title: 'By admin', content: 'for bob', authorId: String(suite.bob.id) },
      suite.admin.headers,
    );
    expect(asAdmin.errors).toBeUndefined();
  });

  it('validates title and content, and an unknown author is NOT_FOUND for an ADMIN', async () => {
    const invalid = await graphql(
      suite.app,
      CREATE_POST,
      { title: '', content: 'x'.repeat(50_001), authorId: String(suite.alice.id) },
      suite.alice.headers,
    );
    expect(invalid.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'title' }, { field: 'content' }] });
    const unknown = await graphql(suite.app, CREATE_POST, { title: 't', content: 'c', authorId: '424242' }, suite.admin.headers);
    expect(unknown.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});

describe('recentPosts, statistics, postsConnection', () => {
  beforeAll(async () => {
    for (let i = 1; i <= 7; i++) {
      await graphql(suite.app, CREATE_POST, { title: `Series ${i}`, content: 'c', authorId: String(suite.bob.id) }, suite.bob.headers);
    }
  });

  it('recentPosts: newest first, limit 1–100', async () => {
    const result = await graphql<{ recentPosts: { title: string }[] }>(suite.app, '{ recentPosts(limit: 3) { title } }');
    expect(result.data?.recentPosts.map((p) => p.title)).toEqual(['Series 7', 'Series 6', 'Series 5']);
    const bad = await graphql(suite.app, '{ recentPosts(limit: 0) { id } }');
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'limit' }] });
  });

  it('statistics counts users and posts', async () => {
    const result = await graphql(suite.app, '{ statistics { totalUsers totalPosts } }');
    expect(result.data).toEqual({
      statistics: { totalUsers: await suite.app.db.prisma.user.count(), totalPosts: await suite.app.db.prisma.post.count() },
    });
  });

  it('postsConnection walks every post once with opaque cursors', async () => {
    const total = await suite.app.db.prisma.post.count();
    const seen: string[] = [];
    let after: string | null = null;
    for (let guard = 0; guard < 10; guard++) {
      const result: {
        data?: {
          postsConnection: {
            edges: { cursor: string; node: { id: string } }[];
            pageInfo: { endCursor: string | null; hasNextPage: boolean; hasPreviousPage: boolean };
            totalCount: number;
          };
        } | null;
      } = await graphql(
        suite.app,
        'query Page($after: String) { postsConnection(first: 4, after: $after) { edges { cursor node { id } } pageInfo { endCursor hasNextPage hasPreviousPage } totalCount } }',
        { after },
      );
      const connection = result.data!.postsConnection;
      expect(connection.totalCount).toBe(total);
      expect(connection.pageInfo.hasPreviousPage).toBe(after !== null);
      seen.push(...connection.edges.map((edge) => edge.node.id));
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
    }
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
  });

  it('rejects an invalid cursor or page size with BAD_USER_INPUT', async () => {
    const cursor = await graphql(suite.app, '{ postsConnection(after: "nonsense") { totalCount } }');
    expect(cursor.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'after' }] });
    const size = await graphql(suite.app, '{ postsConnection(first: 101) { totalCount } }');
    expect(size.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'first' }] });
  });
});
