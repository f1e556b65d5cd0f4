// REST and GraphQL are two doors to one domain layer: the same fixture reads the same, the same forbidden write is refused by both.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { createTestApp } from '../support/app.js';
import { createAccount, type Account } from '../support/accounts.js';
import { seedUsersWithPosts } from '../support/fixtures.js';
import { graphql } from '../support/graphql.js';

let app: FastifyInstance;
let alice: Account;
let bob: Account;

beforeAll(async () => {
  app = await createTestApp();
  await seedUsersWithPosts(app.db.prisma, 4, 2);
  alice = await createAccount(app, 'alice@example.com');
  bob = await createAccount(app, 'bob@example.com');
});
afterAll(() => app.close());

describe('REST ⇄ GraphQL parity', () => {
  it('reads the same users through both doors', async () => {
    const rest = (await app.inject('/api/v1/users?pageSize=100')).json().data.items as Record<string, unknown>[];
    const gql = (await graphql<{ users: Record<string, unknown>[] }>(app, '{ users { id name email age role createdAt } }')).data!.users;
    expect(gql).toEqual(rest.map(({ id, name, email, age, role, createdAt }) => ({ id: String(id), name, email, age, role, createdAt })));
  });

  it('reads the same user and the same posts of that user', async () => {
    const id = alice.id;
    await app.inject({ method: 'POST', url: `/api/v1/users/${id}/posts`, headers: alice.headers, payload: { title: 'P', content: 'C' } });
    const restUser = (await app.inject(`/api/v1/users/${id}`)).json().data;
    const restPosts = (await app.inject(`/api/v1/users/${id}/posts`)).json().data.items;
    const gql = (
      await graphql<{ user: { name: string; posts: { id: string; title: string }[] } }>(app, `{ user(id: ${id}) { name posts { id title } } }`)
    ).data!.user;
    expect(gql.name).toBe(restUser.name);
    expect(gql.posts).toEqual(restPosts.map((p: { id: number; title: string }) => ({ id: String(p.id), title: p.title })));
  });

  it('refuses the same forbidden write through both doors, and neither writes', async () => {
    const before = await app.db.prisma.post.count();
    const rest = await app.inject({
      method: 'POST',
      url: `/api/v1/users/${bob.id}/posts`,
      headers: alice.headers,
      payload: { title: 'x', content: 'y' },
    });
    const gql = await graphql(app, `mutation { createPost(title: "x", content: "y", authorId: ${bob.id}) { id } }`, undefined, alice.headers);
    expect(rest.statusCode).toBe(403);
    expect(gql.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(rest.json().message).toBe(gql.errors?.[0]?.message);
    expect(await app.db.prisma.post.count()).toBe(before);
  });

  it('counts lengths in characters on both doors: the same emoji name is taken by both, the same emoji password refused by both', async () => {
    const CREATE = 'mutation ($input: CreateUserInput!) { createUser(input: $input) { id name } }';
    const name = '🙂'.repeat(60); // 60 characters, 120 UTF-16 units: within the contract's 100
    const rest = await app.inject({
      method: 'POST',
      url: '/api/v1/users',
      payload: { name, email: 'emoji-rest@example.com', password: 'long enough' },
    });
    const gql = await graphql<{ createUser: { name: string } }>(app, CREATE, {
      input: { name, email: 'emoji-gql@example.com', password: 'long enough' },
    });
    expect(rest.statusCode).toBe(201);
    expect(gql.errors).toBeUndefined();
    expect(gql.data!.createUser.name).toBe(name);

    const before = await app.db.prisma.user.count();
    const short = '🙂'.repeat(4); // 4 characters (8 UTF-16 units): under the contract's 8
    const restShort = await app.inject({
      method: 'POST',
      url: '/api/v1/users',
      payload: { name: 'Short', email: 'short-rest@example.com', password: short },
    });
    const gqlShort = await graphql(app, CREATE, { input: { name: 'Short', email: 'short-gql@example.com', password: short } });
    expect(restShort.statusCode).toBe(422);
    expect(restShort.json().errors.map((error: { field: string }) => error.field)).toEqual(['password']);
    expect(gqlShort.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((gqlShort.errors?.[0]?.extensions?.fields as { field: string }[]).map((error) => error.field)).toEqual(['password']);
    expect(await app.db.prisma.user.count()).toBe(before);
  });
});
