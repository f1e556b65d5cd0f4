// GET /api/v1/users and /api/v1/users/{id} through the real app: envelopes, paging modes, sorting, filters, fields.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { createTestApp } from '../support/app.js';
import { nullRepresentation } from '../support/shapes.js';
import { signedUrl } from '../support/auth.js';
import { seedUsersWithPosts, type Fixture } from '../support/fixtures.js';

let app: FastifyInstance;
let fixture: Fixture;

beforeAll(async () => {
  app = await createTestApp();
  fixture = await seedUsersWithPosts(app.db.prisma, 25, 0);
});
afterAll(() => app.close());

async function get(url: string) {
  const response = await app.inject({ method: 'GET', url });
  return { status: response.statusCode, body: response.json(), headers: response.headers };
}

/** As a signed (service) request, which may read every user's e-mail (SPEC §3.1). */
async function getAsService(url: string) {
  const response = await app.inject({ method: 'GET', url: signedUrl(app, 'GET', url).url });
  return { status: response.statusCode, body: response.json(), headers: response.headers };
}

const ids = (items: { id: number }[]) => items.map((item) => item.id);

describe('GET /api/v1/users/{id}', () => {
  it('returns the user in the success envelope, without secrets, its private fields only to those who may see them', async () => {
    const user = fixture.users[2]!;
    const { status, body } = await get(`/api/v1/users/${user.id}`);
    expect(status).toBe(200);
    expect(body).toEqual({
      code: 0,
      message: 'ok',
      data: {
        ...nullRepresentation('User'),
        id: user.id,
        name: user.name,
        email: '',
        age: user.age,
        role: 'USER',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
    expect((await getAsService(`/api/v1/users/${user.id}`)).body.data).toEqual({ ...body.data, email: user.email, emailVerified: false });
    expect(JSON.stringify(body)).not.toMatch(/passwordHash|tokenVersion/);
  });

  it('answers 404 in the error envelope for an unknown id', async () => {
    const { status, body } = await get('/api/v1/users/987654');
    expect(status).toBe(404);
    expect(body).toEqual({ code: 40400, message: 'User not found' });
  });

  it.each(['abc', '1.5', '-3', '0'])('answers 400 naming `id` for the path segment %p', async (segment) => {
    const { status, body } = await get(`/api/v1/users/${segment}`);
    expect(status).toBe(400);
    expect(body.code).toBe(40001);
    expect(body.errors).toEqual([expect.objectContaining({ field: 'id' })]);
  });
});

describe('GET /api/v1/users paging', () => {
  it('defaults to page 1 of 20 in id order', async () => {
    const { status, body } = await get('/api/v1/users');
    expect(status).toBe(200);
    expect(body.code).toBe(0);
    expect(body.data).toMatchObject({ total: 25, page: 1, pageSize: 20, totalPages: 2 });
    expect(ids(body.data.items)).toEqual(fixture.users.slice(0, 20).map((u) => u.id));
  });

  it('pages by page and pageSize, and by the alias size', async () => {
    const byPageSize = await get('/api/v1/users?page=3&pageSize=10');
    expect(byPageSize.body.data).toMatchObject({ page: 3, pageSize: 10, total: 25, totalPages: 3 });
    expect(ids(byPageSize.body.data.items)).toEqual(fixture.users.slice(20).map((u) => u.id));
    const bySize = await get('/api/v1/users?page=2&size=10');
    expect(ids(bySize.body.data.items)).toEqual(fixture.users.slice(10, 20).map((u) => u.id));
  });

  it('pages by offset and limit, reporting page = floor(offset / limit) + 1', async () => {
    const { body } = await get('/api/v1/users?offset=12&limit=5');
    expect(body.data).toMatchObject({ page: 3, pageSize: 5, total: 25, totalPages: 5 });
    expect(ids(body.data.items)).toEqual(fixture.users.slice(12, 17).map((u) => u.id));
  });

  it('answers a page or offset past the last row with an empty page, not a 500 (found by the fuzz)', async () => {
    for (const query of ['page=101&pageSize=100', 'offset=10000&limit=5']) {
      const { status, body } = await get(`/api/v1/users?${query}`);
      expect(status).toBe(200);
      expect(body.data).toMatchObject({ items: [], total: 25, totalExact: true });
    }
  });

  it('refuses a page or offset beyond the offset window (SPEC §4 "At scale"), naming it and pointing to cursors', async () => {
    for (const [query, parameter] of [
      ['page=2147483647', 'page'],
      ['page=102&pageSize=100', 'page'],
      ['offset=10001&limit=5', 'offset'],
    ] as const) {
      const { status, body } = await get(`/api/v1/users?${query}`);
      expect({ query, status, code: body.code, field: body.errors?.[0]?.field }).toEqual({ query, status: 400, code: 40001, field: parameter });
      expect(body.message).toMatch(/cursor/);
    }
  });

  it('walks every user exactly once with cursors, on a nullable sort key too', async () => {
    for (const sort of ['', '&sortBy=-age', '&sort=name,desc']) {
      const seen: number[] = [];
      let cursor = '';
      for (let guard = 0; guard < 20; guard++) {
        const { status, body } = await get(`/api/v1/users?cursor=${encodeURIComponent(cursor)}&limit=4${sort}`);
        expect(status).toBe(200);
        expect(body.paging).toBe('cursor'); // the contract's discriminator
        seen.push(...ids(body.data.items));
        if (!body.data.hasMore) {
          expect(body.data.nextCursor).toBeNull();
          break;
        }
        cursor = body.data.nextCursor;
      }
      expect([...seen].sort((a, b) => a - b)).toEqual(fixture.users.map((u) => u.id));
    }
  });

  it.each([
    ['pageSize=101', 'pageSize'],
    ['pageSize=0', 'pageSize'],
    ['page=0', 'page'],
    ['limit=-1', 'limit'],
    ['limit=2.5', 'limit'],
    ['offset=-5', 'offset'],
    ['size=abc', 'size'],
  ])('rejects %s with 400 naming the parameter', async (query, field) => {
    const { status, body } = await get(`/api/v1/users?${query}`);
    expect(status).toBe(400);
    expect(body.code).toBe(40001);
    expect(body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  });

  it('rejects a malformed or foreign cursor with 400 naming cursor', async () => {
    for (const cursor of ['not-a-cursor', Buffer.from('{"f":"id"}').toString('base64url')]) {
      const { status, body } = await get(`/api/v1/users?cursor=${cursor}&limit=2`);
      expect(status).toBe(400);
      expect(body.errors).toEqual([expect.objectContaining({ field: 'cursor' })]);
    }
    const first = await get('/api/v1/users?cursor=&limit=2&sort=name');
    const foreign = await get(`/api/v1/users?cursor=${first.body.data.nextCursor}&limit=2&sort=email`);
    expect(foreign.status).toBe(400);
  });
});

describe('GET /api/v1/users sorting, filters, fields, search', () => {
  const names = (items: { name: string }[]) => items.map((item) => item.name);
  const byNameDesc = () =>
    [...fixture.users]
      .sort((a, b) => b.name.localeCompare(a.name))
      .slice(0, 5)
      .map((u) => u.name);

  it('accepts the three sort syntaxes with the same meaning', async () => {
    for (const query of ['sort=name&order=desc', 'sortBy=-name', 'sort=name,desc']) {
      const { status, body } = await get(`/api/v1/users?${query}&pageSize=5`);
      expect(status).toBe(200);
      expect(names(body.data.items)).toEqual(byNameDesc());
    }
  });

  it('rejects a field outside the allow-list with 400 naming sort', async () => {
    const { status, body } = await get('/api/v1/users?sort=passwordHash');
    expect(status).toBe(400);
    expect(body.errors).toEqual([expect.objectContaining({ field: 'sort' })]);
  });

  it('filters by role and age by equality', async () => {
    const admins = await get('/api/v1/users?role=ADMIN');
    expect(ids(admins.body.data.items)).toEqual([fixture.users[0]!.id]);
    const aged = await get('/api/v1/users?age=21&pageSize=100');
    expect(ids(aged.body.data.items)).toEqual(fixture.users.filter((u) => u.age === 21).map((u) => u.id));
    const bad = await get('/api/v1/users?role=KING');
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'role' })]));
  });

  it('keeps only the selected fields, always with id', async () => {
    const { body } = await get('/api/v1/users?fields=name&pageSize=2');
    expect(body.data.items).toEqual(fixture.users.slice(0, 2).map((u) => ({ id: u.id, name: u.name })));
    const bad = await get('/api/v1/users?fields=name,passwordHash');
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([expect.objectContaining({ field: 'fields' })]);
  });

  it('searches name and email case-insensitively with q or search (the e-mail for those who may see it)', async () => {
    const byQ = await get('/api/v1/users?q=USER%20007');
    expect(ids(byQ.body.data.items)).toEqual([fixture.users[6]!.id]);
    const bySearch = await getAsService('/api/v1/users?search=user12@EXAMPLE');
    expect(ids(bySearch.body.data.items)).toEqual([fixture.users[11]!.id]);
    expect(ids((await get('/api/v1/users?search=user12@EXAMPLE')).body.data.items)).toEqual([]);
  });
});

describe('REST errors', () => {
  it('answers an unknown route with 404 in the envelope', async () => {
    const { status, body } = await get('/api/v1/nothing-here');
    expect(status).toBe(404);
    expect(body).toEqual({ code: 40400, message: 'Route GET /api/v1/nothing-here not found' });
  });
});
