// /api/v1/users/{id}/posts: nested list, one post of a user (404 when not theirs), and creation (owner or ADMIN).
import { describe, expect, it } from '@jest/globals';
import { useTestApp } from '../support/app.js';

const suite = useTestApp();

const create = (userId: number, payload: object, headers: Record<string, string> = {}) =>
  suite.app.inject({ method: 'POST', url: `/api/v1/users/${userId}/posts`, payload, headers });

describe('POST /api/v1/users/{id}/posts', () => {
  it('creates a post for oneself: 201, Location, the post in the envelope', async () => {
    const response = await create(suite.alice.id, { title: 'First', content: 'Hello' }, suite.alice.headers);
    expect(response.statusCode).toBe(201);
    const post = response.json().data;
    expect(response.json()).toMatchObject({ code: 0, message: 'ok', data: { title: 'First', content: 'Hello', authorId: suite.alice.id } });
    expect(response.headers.location).toBe(`/api/v1/users/${suite.alice.id}/posts/${post.id}`);
    expect((await suite.app.inject(response.headers.location as string)).json().data).toEqual(post);
  });

  it('refuses: anonymous 401, another user 403, an ADMIN may; nothing written on refusal', async () => {
    const before = await suite.app.db.prisma.post.count();
    const anonymous = await create(suite.bob.id, { title: 't', content: 'c' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toMatchObject({ code: 40100, error: expect.any(String) });
    const other = await create(suite.bob.id, { title: 't', content: 'c' }, suite.alice.headers);
    expect(other.statusCode).toBe(403);
    expect(other.json()).toMatchObject({ code: 40300 });
    expect(await suite.app.db.prisma.post.count()).toBe(before);
    expect((await create(suite.bob.id, { title: 'by admin', content: 'c' }, suite.admin.headers)).statusCode).toBe(201);
    expect((await create(987654, { title: 't', content: 'c' }, suite.admin.headers)).statusCode).toBe(404);
  });

  it('validates the body against the contract: 422 naming each field, unknown fields refused', async () => {
    const response = await create(suite.alice.id, { title: '', content: 42, extra: true }, suite.alice.headers);
    expect(response.statusCode).toBe(422);
    expect(response.json().code).toBe(42200);
    expect(
      response
        .json()
        .errors.map((e: { field: string }) => e.field)
        .sort(),
    ).toEqual(['content', 'extra', 'title']);
    const malformed = await suite.app.inject({
      method: 'POST',
      url: `/api/v1/users/${suite.alice.id}/posts`,
      headers: { ...suite.alice.headers, 'content-type': 'application/json' },
      payload: '{"title":',
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().code).toBe(40000);
  });
});

describe('GET /api/v1/users/{id}/posts[/{postId}]', () => {
  it('lists only that user’s posts, paged; 404 for an unknown user', async () => {
    const list = await suite.app.inject(`/api/v1/users/${suite.alice.id}/posts`);
    expect(list.statusCode).toBe(200);
    expect(list.json().data.items.every((p: { authorId: number }) => p.authorId === suite.alice.id)).toBe(true);
    expect(list.json().data).toMatchObject({ page: 1, pageSize: 20 });
    expect((await suite.app.inject('/api/v1/users/987654/posts')).statusCode).toBe(404);
  });

  it('answers 404 when the post is not that user’s', async () => {
    const post = (await create(suite.alice.id, { title: 'mine', content: 'c' }, suite.alice.headers)).json().data;
    expect((await suite.app.inject(`/api/v1/users/${suite.alice.id}/posts/${post.id}`)).statusCode).toBe(200);
    const wrongOwner = await suite.app.inject(`/api/v1/users/${suite.bob.id}/posts/${post.id}`);
    expect(wrongOwner.statusCode).toBe(404);
    expect(wrongOwner.json()).toEqual({ code: 40400, message: 'Post not found' });
  });
});
