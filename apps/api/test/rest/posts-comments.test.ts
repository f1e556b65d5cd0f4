// /api/v1/posts, /api/v1/posts/{id}, /api/v1/comments[/{id}] and POST /api/v1/posts/{id}/comments through the real app.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Comment, Post } from '@users-posts/db';
import type { FastifyInstance } from 'fastify';
import { createTestApp } from '../support/app.js';
import { createAccount, type Account } from '../support/accounts.js';
import { signedUrl } from '../support/auth.js';

let app: FastifyInstance;
let alice: Account;
let bob: Account;
let admin: Account;
let posts: Post[];
let comments: Comment[];

const postJson = (post: Post) => ({
  id: post.id,
  title: post.title,
  content: post.content,
  authorId: post.authorId,
  createdAt: post.createdAt.toISOString(),
  updatedAt: post.updatedAt.toISOString(),
});
const commentJson = (comment: Comment) => ({
  id: comment.id,
  body: comment.body,
  postId: comment.postId,
  authorId: comment.authorId,
  createdAt: comment.createdAt.toISOString(),
});

beforeAll(async () => {
  app = await createTestApp();
  alice = await createAccount(app, 'alice@example.com');
  bob = await createAccount(app, 'bob@example.com');
  admin = await createAccount(app, 'admin@example.com', 'ADMIN');
  const prisma = app.db.prisma;
  posts = [];
  // Distinct, increasing createdAt values so sorting by time is deterministic; titles not in id order.
  const seed = [
    { title: 'Zebra crossings', content: 'About stripes', authorId: alice.id },
    { title: 'apples', content: 'Fruit and a ZEBRA', authorId: alice.id },
    { title: 'Mangoes', content: 'More fruit', authorId: bob.id },
    { title: 'Banana bread', content: 'Baking', authorId: alice.id },
    { title: 'Cherries', content: 'Red things', authorId: bob.id },
  ];
  for (const [i, data] of seed.entries()) {
    posts.push(await prisma.post.create({ data: { ...data, createdAt: new Date(Date.UTC(2024, 0, 10 - i)) } }));
  }
  comments = [];
  const commentSeed = [
    { body: 'Great post', postId: posts[0]!.id, authorId: bob.id },
    { body: 'I disagree', postId: posts[0]!.id, authorId: alice.id },
    { body: 'great fruit', postId: posts[1]!.id, authorId: bob.id },
    { body: 'Tasty', postId: posts[2]!.id, authorId: alice.id },
    { body: 'Yum', postId: posts[1]!.id, authorId: admin.id },
  ];
  for (const [i, data] of commentSeed.entries()) {
    comments.push(await prisma.comment.create({ data: { ...data, createdAt: new Date(Date.UTC(2024, 1, 10 - i)) } }));
  }
});
afterAll(() => app.close());

async function get(url: string, headers: Record<string, string> = {}) {
  const response = await app.inject({ method: 'GET', url, headers });
  return { status: response.statusCode, body: response.json(), headers: response.headers };
}
const ids = (items: { id: number }[]) => items.map((item) => item.id);
const byId = (list: { id: number }[]) => [...list].sort((a, b) => a.id - b.id);

describe('GET /api/v1/posts', () => {
  it('answers page 1 of 20 in id order in the exact envelope', async () => {
    const { status, body } = await get('/api/v1/posts');
    expect(status).toBe(200);
    expect(body).toEqual({
      code: 0,
      message: 'ok',
      paging: 'page',
      data: { items: posts.map(postJson), total: 5, page: 1, pageSize: 20, totalPages: 1, totalExact: true },
    });
  });

  it('pages by page/pageSize and size, and by offset/limit', async () => {
    const page2 = await get('/api/v1/posts?page=2&pageSize=2');
    expect(page2.body.data).toEqual({ items: posts.slice(2, 4).map(postJson), total: 5, page: 2, pageSize: 2, totalPages: 3, totalExact: true });
    expect((await get('/api/v1/posts?page=3&size=2')).body.data).toMatchObject({ page: 3, pageSize: 2, total: 5 });
    expect(ids((await get('/api/v1/posts?page=3&size=2')).body.data.items)).toEqual([posts[4]!.id]);
    const offset = await get('/api/v1/posts?offset=3&limit=2');
    expect(offset.body.data).toEqual({ items: posts.slice(3, 5).map(postJson), total: 5, page: 2, pageSize: 2, totalPages: 3, totalExact: true });
    expect((await get('/api/v1/posts?limit=1')).body.data).toMatchObject({ page: 1, pageSize: 1, total: 5, totalPages: 5, totalExact: true });
  });

  it('walks every post with cursor paging, without skips or repeats, in createdAt order', async () => {
    const seen: number[] = [];
    let cursor = '';
    for (let round = 0; round < 5; round++) {
      const { status, body } = await get(`/api/v1/posts?sort=createdAt&cursor=${encodeURIComponent(cursor)}&limit=2`);
      expect(status).toBe(200);
      expect(Object.keys(body.data).sort()).toEqual(['hasMore', 'items', 'nextCursor']);
      seen.push(...ids(body.data.items));
      if (!body.data.hasMore) {
        expect(body.data.nextCursor).toBeNull();
        break;
      }
      cursor = body.data.nextCursor;
    }
    expect(seen).toEqual([...posts].reverse().map((p) => p.id));
  });

  it('sorts by the three syntaxes', async () => {
    const titleDesc = [...posts].sort((a, b) => (a.title < b.title ? 1 : -1)).map((p) => p.id);
    expect(ids((await get('/api/v1/posts?sort=title&order=desc')).body.data.items)).toEqual(titleDesc);
    expect(ids((await get('/api/v1/posts?sortBy=-title')).body.data.items)).toEqual(titleDesc);
    expect(ids((await get('/api/v1/posts?sort=title,desc')).body.data.items)).toEqual(titleDesc);
    expect(ids((await get('/api/v1/posts?sortBy=createdAt')).body.data.items)).toEqual([...posts].reverse().map((p) => p.id));
  });

  it('filters by authorId, searches title and content case-insensitively, and reduces fields', async () => {
    const mine = await get(`/api/v1/posts?authorId=${bob.id}`);
    expect(mine.body.data).toMatchObject({ total: 2 });
    expect(ids(mine.body.data.items)).toEqual([posts[2]!.id, posts[4]!.id]);
    expect(ids((await get('/api/v1/posts?q=zebra')).body.data.items)).toEqual([posts[0]!.id, posts[1]!.id]);
    expect(ids((await get(`/api/v1/posts?search=FRUIT&authorId=${bob.id}`)).body.data.items)).toEqual([posts[2]!.id]);
    const fields = await get('/api/v1/posts?fields=title&pageSize=1');
    expect(fields.body.data.items).toEqual([{ id: posts[0]!.id, title: posts[0]!.title }]);
    expect((await get('/api/v1/posts?authorId=987654')).body.data).toMatchObject({ items: [], total: 0, totalPages: 0, totalExact: true });
  });

  it.each([
    ['sort=content', 'sort'],
    ['sortBy=-authorId', 'sortBy'],
    ['fields=title,secret', 'fields'],
    ['pageSize=101', 'pageSize'],
    ['page=0', 'page'],
    ['limit=0', 'limit'],
    ['offset=-1', 'offset'],
    ['authorId=abc', 'authorId'],
    ['cursor=not-a-cursor', 'cursor'],
    ['order=sideways', 'order'],
  ])('rejects %s with 400 naming %s', async (query, field) => {
    const { status, body } = await get(`/api/v1/posts?${query}`);
    expect(status).toBe(400);
    expect(body.code).toBe(40001);
    expect(body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  });

  it('rejects a cursor issued for another sort with 400 naming cursor', async () => {
    const first = await get('/api/v1/posts?cursor=&limit=1');
    const foreign = await get(`/api/v1/posts?sort=title&cursor=${first.body.data.nextCursor}&limit=1`);
    expect(foreign.status).toBe(400);
    expect(foreign.body.errors).toEqual([expect.objectContaining({ field: 'cursor' })]);
  });
});

describe('GET /api/v1/posts/{id}', () => {
  it('returns the post; 404 for an unknown id; 400 naming id for a bad one', async () => {
    expect(await get(`/api/v1/posts/${posts[1]!.id}`)).toMatchObject({ status: 200, body: { code: 0, message: 'ok', data: postJson(posts[1]!) } });
    expect(await get('/api/v1/posts/987654')).toMatchObject({ status: 404, body: { code: 40400, message: 'Post not found' } });
    const bad = await get('/api/v1/posts/abc');
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([expect.objectContaining({ field: 'id' })]);
  });
});

describe('GET /api/v1/comments', () => {
  it('lists every comment in the exact envelope', async () => {
    const { status, body } = await get('/api/v1/comments');
    expect(status).toBe(200);
    expect(body).toEqual({
      code: 0,
      message: 'ok',
      paging: 'page',
      data: { items: comments.map(commentJson), total: 5, page: 1, pageSize: 20, totalPages: 1, totalExact: true },
    });
  });

  it('filters by postId and userId (the author), searches the body, reduces fields', async () => {
    expect(ids((await get(`/api/v1/comments?postId=${posts[1]!.id}`)).body.data.items)).toEqual([comments[2]!.id, comments[4]!.id]);
    expect(ids((await get(`/api/v1/comments?userId=${bob.id}`)).body.data.items)).toEqual([comments[0]!.id, comments[2]!.id]);
    expect(ids((await get(`/api/v1/comments?postId=${posts[0]!.id}&userId=${alice.id}`)).body.data.items)).toEqual([comments[1]!.id]);
    expect(ids((await get('/api/v1/comments?q=GREAT')).body.data.items)).toEqual([comments[0]!.id, comments[2]!.id]);
    expect((await get('/api/v1/comments?fields=body,postId&pageSize=1')).body.data.items).toEqual([
      { id: comments[0]!.id, body: comments[0]!.body, postId: comments[0]!.postId },
    ]);
  });

  it('pages by cursor (newest first), offset and page', async () => {
    const seen: number[] = [];
    let cursor = '';
    let rounds = 0;
    do {
      const { body } = await get(`/api/v1/comments?sortBy=-createdAt&limit=2&cursor=${encodeURIComponent(cursor)}`);
      seen.push(...ids(body.data.items));
      cursor = body.data.nextCursor ?? '';
      expect(body.data.hasMore).toBe(cursor !== '');
      rounds++;
    } while (cursor && rounds < 10);
    expect(rounds).toBe(3);
    expect(seen).toEqual(comments.map((c) => c.id));
    expect(ids((await get('/api/v1/comments?sort=id,desc&offset=1&limit=2')).body.data.items)).toEqual([comments[3]!.id, comments[2]!.id]);
    expect((await get('/api/v1/comments?page=2&pageSize=3')).body.data).toMatchObject({
      page: 2,
      pageSize: 3,
      total: 5,
      totalPages: 2,
      totalExact: true,
    });
  });

  it.each([
    ['sort=body', 'sort'],
    ['fields=title', 'fields'],
    ['postId=x', 'postId'],
    ['userId=0', 'userId'],
    ['limit=1000', 'limit'],
    ['cursor=%7B%7D', 'cursor'],
  ])('rejects %s with 400 naming %s', async (query, field) => {
    const { status, body } = await get(`/api/v1/comments?${query}`);
    expect(status).toBe(400);
    expect(body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  });

  it('GET /comments/{id}: 200, 404, 400', async () => {
    expect(await get(`/api/v1/comments/${comments[3]!.id}`)).toMatchObject({
      status: 200,
      body: { code: 0, message: 'ok', data: commentJson(comments[3]!) },
    });
    expect(await get('/api/v1/comments/987654')).toMatchObject({ status: 404, body: { code: 40400, message: 'Comment not found' } });
    expect((await get('/api/v1/comments/1.5')).status).toBe(400);
  });
});

describe('POST /api/v1/posts/{id}/comments', () => {
  const comment = (postId: number, payload: unknown, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url: `/api/v1/posts/${postId}/comments`, payload: payload as object, headers });

  it('creates a comment by the caller: 201, Location, the comment in the envelope', async () => {
    const response = await comment(posts[4]!.id, { body: 'Lovely cherries' }, alice.headers);
    expect(response.statusCode).toBe(201);
    const created = response.json().data;
    expect(response.json()).toEqual({
      code: 0,
      message: 'ok',
      data: { id: expect.any(Number), body: 'Lovely cherries', postId: posts[4]!.id, authorId: alice.id, createdAt: expect.any(String) },
    });
    expect(response.headers.location).toBe(`/api/v1/comments/${created.id}`);
    expect((await get(response.headers.location as string)).body.data).toEqual(created);
    expect(ids((await get(`/api/v1/comments?postId=${posts[4]!.id}`)).body.data.items)).toEqual([created.id]);
    // An ADMIN comments as itself.
    const byAdmin = await comment(posts[4]!.id, { body: 'x'.repeat(5000) }, admin.headers);
    expect(byAdmin.statusCode).toBe(201);
    expect(byAdmin.json().data.authorId).toBe(admin.id);
    await app.db.prisma.comment.deleteMany({ where: { postId: posts[4]!.id } });
  });

  it('refuses, changing nothing: 401 anonymous, 403 signed request, 404 unknown post, 422 naming fields, 400', async () => {
    const before = await app.db.prisma.comment.count();

    const anonymous = await comment(posts[0]!.id, { body: 'hi' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toEqual({ code: 40100, message: expect.any(String), error: expect.any(String) });

    const payload = JSON.stringify({ body: 'as a service' });
    const signed = signedUrl(app, 'POST', `/api/v1/posts/${posts[0]!.id}/comments`, payload);
    const service = await app.inject({ method: 'POST', url: signed.url, payload, headers: { 'content-type': 'application/json' } });
    expect(service.statusCode).toBe(403);
    expect(service.json()).toEqual({ code: 40300, message: expect.any(String) });

    const unknown = await comment(987654, { body: 'hi' }, bob.headers);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ code: 40400, message: 'Post not found' });

    for (const [body, fields] of [
      [{}, ['body']],
      [{ body: '' }, ['body']],
      [{ body: '   ' }, ['body']],
      [{ body: 'x'.repeat(5001) }, ['body']],
      [{ body: 42, extra: true }, ['body', 'extra']],
    ] as const) {
      const response = await comment(posts[0]!.id, body, bob.headers);
      expect(response.statusCode).toBe(422);
      expect(response.json().code).toBe(42200);
      expect(
        response
          .json()
          .errors.map((e: { field: string }) => e.field)
          .sort(),
      ).toEqual(fields);
    }

    const badId = await comment(0, { body: 'hi' }, bob.headers);
    expect(badId.statusCode).toBe(400);
    expect(badId.json().errors).toEqual([expect.objectContaining({ field: 'id' })]);
    const malformed = await app.inject({
      method: 'POST',
      url: `/api/v1/posts/${posts[0]!.id}/comments`,
      headers: { ...bob.headers, 'content-type': 'application/json' },
      payload: '{"body":',
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().code).toBe(40000);

    expect(await app.db.prisma.comment.count()).toBe(before);
    expect(byId((await get('/api/v1/comments')).body.data.items)).toEqual(comments.map(commentJson));
  });
});
