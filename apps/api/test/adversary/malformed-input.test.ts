// Malformed input (issue 10 item 5): each class an attacker can send is a 4xx in the documented envelope (or
// BAD_USER_INPUT in GraphQL), never a 500; nothing is stored and the server keeps answering. Also foreign cursors
// (SPEC §4: bound to collection, sort, filters and search) and literal `%` `_` `\` in search.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { createTestApp } from '../support/app.js';
import { graphql } from '../support/graphql.js';
import { seedUsersWithPosts } from '../support/fixtures.js';

type Reply = Awaited<ReturnType<FastifyInstance['inject']>>;

const cursorOf = (payload: unknown) => Buffer.from(JSON.stringify(payload)).toString('base64url');

let app: FastifyInstance;
let nextAddress = 1;
const counts = async () => ({ users: await app.db.prisma.user.count(), posts: await app.db.prisma.post.count() });

beforeAll(async () => {
  app = await createTestApp();
  await seedUsersWithPosts(app.db.prisma, 6, 2); // user 1 is the ADMIN
});
afterAll(() => app.close());

/** A 4xx in the REST envelope naming `field` (when given). */
function expectRefused(reply: Reply, field?: string) {
  expect(reply.statusCode).toBeGreaterThanOrEqual(400);
  expect(reply.statusCode).toBeLessThan(500);
  const body = reply.json() as { code: number; message: string; errors?: { field: string }[] };
  expect(body.code).toBe(reply.statusCode * 100 + (body.code % 100));
  expect(typeof body.message).toBe('string');
  if (field) expect(body.errors?.map((error) => error.field)).toContain(field);
}

/** Each request is refused, nothing is stored, and the server still answers. */
async function expectAllRefused(requests: { url: string; method?: 'GET' | 'POST' | 'PATCH'; payload?: unknown; field?: string }[]) {
  const before = await counts();
  for (const request of requests) {
    const reply = await app.inject({
      method: request.method ?? 'GET',
      url: request.url,
      remoteAddress: `192.0.2.${nextAddress++ % 250}`,
      ...(request.payload === undefined
        ? {}
        : {
            headers: { 'content-type': 'application/json' },
            payload: typeof request.payload === 'string' ? request.payload : JSON.stringify(request.payload),
          }),
    });
    try {
      expectRefused(reply, request.field);
    } catch (error) {
      throw new Error(
        `${request.method ?? 'GET'} ${request.url.slice(0, 200)} ${JSON.stringify(request.payload ?? '').slice(0, 100)} → ${reply.statusCode} ${reply.body.slice(0, 200)}\n${String(error)}`,
      );
    }
  }
  expect(await counts()).toEqual(before);
  expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
}

describe('numbers beyond any range', () => {
  it('refuses huge, exponent, negative-zero, padded and duplicated numbers in paging, filters and ids', async () => {
    await expectAllRefused([
      { url: '/api/v1/users?page=1e400', field: 'page' },
      { url: '/api/v1/users?offset=1e400', field: 'offset' },
      { url: '/api/v1/users?limit=1e400', field: 'limit' },
      { url: '/api/v1/users?pageSize=1e400', field: 'pageSize' },
      { url: '/api/v1/users?page=-0', field: 'page' },
      { url: '/api/v1/users?page=1&page=2', field: 'page' },
      { url: '/api/v1/users?age=1e400', field: 'age' },
      { url: '/api/v1/users?age=NaN', field: 'age' },
      { url: '/api/v1/users/1e400', field: 'id' },
      { url: '/api/v1/users/99999999999999999999', field: 'id' },
      { url: '/api/v1/posts?authorId=2147483648', field: 'authorId' },
      { url: '/api/v1/users', method: 'POST', payload: '{"name":"n","email":"n1@example.com","age":1e400}', field: 'age' },
      { url: '/api/v1/users', method: 'POST', payload: { name: 'n', email: 'n2@example.com', age: 1e300 }, field: 'age' },
    ]);
  });

  it('refuses a page or offset beyond 32 bits (as GraphQL Int) or beyond the offset window naming it, and answers the deepest with an empty page past the end', async () => {
    await expectAllRefused([
      { url: '/api/v1/users?page=99999999999999999999', field: 'page' },
      { url: '/api/v1/users?page=2147483648', field: 'page' },
      { url: '/api/v1/users?page=2147483647', field: 'page' },
      { url: '/api/v1/users?offset=1e300&limit=1', field: 'offset' },
      { url: '/api/v1/users?offset=2147483647&limit=1', field: 'offset' },
      { url: '/api/v1/users?offset=10001&limit=1', field: 'offset' },
    ]);
    for (const [query, page] of [
      ['page=10001&pageSize=1', 10001],
      ['offset=10000&limit=1', 10001],
    ] as const) {
      const reply = await app.inject({ method: 'GET', url: `/api/v1/users?${query}` });
      expect(reply.statusCode).toBe(200);
      expect(reply.json()).toMatchObject({ data: { items: [], page } });
    }
  });

  it('answers ids beyond int4 in GraphQL with "not found" (null), not an error', async () => {
    const result = await graphql(app, '{ user(id: "99999999999999999999") { id } post(id: "1e400") { id } }');
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({ user: null, post: null });
  });
});

describe('wrong-typed and forged cursors', () => {
  it('refuses cursor values of the wrong type for their sort field, and ids beyond int4', async () => {
    const forged = (sort: string, v: unknown, id: unknown = 1) => {
      const real = `/api/v1/users?cursor=&limit=1&sort=${sort}`;
      return { real, v, id };
    };
    const requests = [];
    for (const { real, v, id } of [
      forged('createdAt', 'not a date'),
      forged('createdAt', 12),
      forged('createdAt', '-100000-01-01T00:00:00.000Z'), // Date.parse takes it; PostgreSQL has no such year
      forged('createdAt', '+275760-09-13T00:00:00.000Z'),
      forged('createdAt', '0000-01-01T00:00:00.000Z'),
      forged('createdAt', '2024-02-30T00:00:00Z'), // Date.parse rolls it to 1 March; PostgreSQL refuses it (was a 500)
      forged('createdAt', '2023-02-29T00:00:00.000Z'),
      forged('createdAt', '2024-04-31T12:00:00Z'),
      forged('createdAt', '2024-01-01T24:00:00Z'),
      forged('age', 'abc'),
      forged('age', 1e300),
      forged('age', [1]),
      forged('age', { gt: 1 }),
      forged('name', 5),
      forged('name', 'a\u0000b'),
      forged('name', '\ud800'),
      forged('name', 'x', 99_999_999_999),
      forged('id', 1, -1),
      forged('id', 1, 'NaN'),
    ]) {
      // Start from a genuine cursor of this listing so only the value differs (the fingerprint is right).
      const first = (await app.inject({ method: 'GET', url: real })).json() as { data: { nextCursor: string } };
      const genuine = JSON.parse(Buffer.from(first.data.nextCursor, 'base64url').toString('utf8')) as Record<string, unknown>;
      requests.push({ url: `${real.replace('cursor=', `cursor=${cursorOf({ ...genuine, v, id })}`)}`, field: 'cursor' });
    }
    requests.push(
      { url: `/api/v1/users?cursor=${cursorOf([1, 2])}`, field: 'cursor' },
      { url: `/api/v1/users?cursor=${cursorOf(null)}`, field: 'cursor' },
      { url: `/api/v1/users?cursor=${cursorOf('x')}`, field: 'cursor' },
      { url: '/api/v1/users?cursor=%00%00', field: 'cursor' },
      { url: '/api/v1/users?cursor=!!!', field: 'cursor' },
    );
    await expectAllRefused(requests);
  });

  it('refuses a GraphQL postsConnection cursor of the wrong shape with BAD_USER_INPUT naming `after`', async () => {
    for (const after of [cursorOf({ f: 'id', d: 'asc', v: 'x', id: 1e300 }), cursorOf([]), 'x']) {
      const result = await graphql(app, 'query ($after: String) { postsConnection(first: 1, after: $after) { totalCount } }', { after });
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'after' }] });
    }
  });
});

describe('foreign cursors (SPEC §4: bound to collection, sort, filters and search)', () => {
  const nextCursor = async (url: string) => ((await app.inject({ method: 'GET', url })).json() as { data: { nextCursor: string } }).data.nextCursor;

  it('refuses a cursor used on another collection, filter, sort or search with 400 (40001) naming `cursor`', async () => {
    const posts = await nextCursor('/api/v1/posts?cursor=&limit=1');
    const users = await nextCursor('/api/v1/users?cursor=&limit=1&role=USER');
    const byName = await nextCursor('/api/v1/users?cursor=&limit=1&sort=name');
    const searched = await nextCursor('/api/v1/users?cursor=&limit=1&q=user');
    const user2Posts = await nextCursor('/api/v1/users/2/posts?cursor=&limit=1');
    for (const url of [
      `/api/v1/users?cursor=${posts}&limit=1`,
      `/api/v1/users?cursor=${users}&limit=1&role=ADMIN`,
      `/api/v1/users?cursor=${users}&limit=1`,
      `/api/v1/users?cursor=${byName}&limit=1&sort=age`,
      `/api/v1/users?cursor=${byName}&limit=1&sort=name,desc`,
      `/api/v1/users?cursor=${searched}&limit=1&q=User%200`,
      `/api/v1/users/3/posts?cursor=${user2Posts}&limit=1`,
    ]) {
      const reply = await app.inject({ method: 'GET', url });
      expect(reply.statusCode).toBe(400);
      expect(reply.json()).toMatchObject({ code: 40001, errors: [{ field: 'cursor' }] });
    }
    // …while the same cursor on its own listing pages on.
    expect((await app.inject({ method: 'GET', url: `/api/v1/users?cursor=${users}&limit=1&role=USER` })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: `/api/v1/posts?cursor=${posts}&limit=1` })).statusCode).toBe(200);
  });

  it('refuses a REST cursor as a GraphQL postsConnection `after`, and accepts the connection’s own', async () => {
    const rest = await nextCursor('/api/v1/posts?cursor=&limit=1');
    const refused = await graphql(app, 'query ($after: String) { postsConnection(first: 1, after: $after) { totalCount } }', { after: rest });
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'after' }] });
    const own = await graphql<{ postsConnection: { pageInfo: { endCursor: string } } }>(
      app,
      '{ postsConnection(first: 1) { pageInfo { endCursor } } }',
    );
    const next = await graphql(app, 'query ($after: String) { postsConnection(first: 1, after: $after) { totalCount } }', {
      after: own.data!.postsConnection.pageInfo.endCursor,
    });
    expect(next.errors).toBeUndefined();
  });
});

describe('NUL bytes and unpaired surrogates', () => {
  it('refuses them in REST query parameters, paths and bodies (keys too), storing nothing', async () => {
    await expectAllRefused([
      { url: '/api/v1/users?q=%00', field: 'q' },
      { url: '/api/v1/users?search=a%00b', field: 'search' },
      { url: '/api/v1/posts?q=%00', field: 'q' },
      { url: '/api/v1/users/1%00' },
      { url: '/api/v1/users', method: 'POST', payload: { name: 'a\u0000', email: 'nul1@example.com' }, field: 'name' },
      { url: '/api/v1/users', method: 'POST', payload: { name: 'a', email: 'nul2\u0000@example.com' }, field: 'email' },
      { url: '/api/v1/users', method: 'POST', payload: '{"name":"a\\ud800","email":"lone@example.com"}', field: 'name' },
      { url: '/api/v1/users', method: 'POST', payload: '{"name":"a\\udc00b","email":"lone2@example.com"}', field: 'name' },
      { url: '/api/v1/users', method: 'POST', payload: '{"name":"a","email":"k@example.com","\\u0000":1}' },
    ]);
  });

  it('refuses them in GraphQL arguments and variables with BAD_USER_INPUT, storing nothing', async () => {
    const before = await counts();
    const mutation = 'mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }';
    for (const result of [
      await graphql(app, 'mutation { createUser(input: { name: "a\\u0000", email: "g1@example.com" }) { id } }'),
      await graphql(app, mutation, { input: { name: 'a\u0000', email: 'g2@example.com' } }),
      await graphql(app, mutation, { input: { name: '\ud800', email: 'g3@example.com' } }),
      await graphql(app, mutation, { input: { name: 'a', email: 'g4\u0000@example.com' } }),
    ]) {
      expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
    expect(await counts()).toEqual(before);
  });

  it('refuses a NUL in a header value at the HTTP parser (never reaches the app)', async () => {
    const { createConnection } = await import('node:net');
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    const status = await new Promise<string>((resolve) => {
      const socket = createConnection(port, '127.0.0.1', () => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Evil: a\u0000b\r\n\r\n'));
      socket.once('data', (chunk) => {
        resolve(chunk.toString('latin1').split('\r\n')[0]!);
        socket.destroy();
      });
    });
    expect(status).toMatch(/^HTTP\/1\.1 4\d\d/);
  });
});

describe('long strings, arrays for scalars, prototype keys', () => {
  it('refuses them with 4xx naming the parameter or field', async () => {
    const long = 'x'.repeat(20_000);
    await expectAllRefused([
      { url: `/api/v1/users?q=${long}`, field: 'q' },
      { url: `/api/v1/users?sort=${long}`, field: 'sort' },
      { url: `/api/v1/users?fields=${long}`, field: 'fields' },
      { url: `/api/v1/users?cursor=${long}`, field: 'cursor' },
      { url: '/api/v1/users?sort=__proto__', field: 'sort' },
      { url: '/api/v1/users?fields=constructor', field: 'fields' },
      { url: '/api/v1/users?role=USER&role=ADMIN', field: 'role' },
      { url: '/api/v1/users', method: 'POST', payload: { name: ['a'], email: 'arr@example.com' }, field: 'name' },
      { url: '/api/v1/users', method: 'POST', payload: { name: 'a', email: `${'e'.repeat(10_000)}@example.com` }, field: 'email' },
      { url: '/api/v1/users', method: 'POST', payload: '{"name":"a","email":"p1@example.com","__proto__":{"role":"ADMIN"}}' },
      { url: '/api/v1/users', method: 'POST', payload: '{"name":"a","email":"p2@example.com","constructor":{"prototype":{"role":"ADMIN"}}}' },
      { url: '/api/v1/posts', method: 'POST', payload: { title: 't', content: 'c', authorId: 99_999_999_999 } },
    ]);
  });

  it('attack (error amplification): 1,000 unknown keys, one of 2,000 characters, get at most 100 errors of bounded names', async () => {
    // Within the longest valid sign-up body (rest/request-body.ts): what the validator answers is what is measured.
    const body: Record<string, unknown> = { name: 'a', email: 'amplify@example.com', ['k'.repeat(2_000)]: { ['deep'.repeat(200)]: '\u0000' } };
    for (let index = 0; index < 1_000; index += 1) body[`unknown${index}`] = index;
    const before = await counts();
    const reply = await app.inject({ method: 'POST', url: '/api/v1/users', payload: body });
    expect(reply.statusCode).toBe(422);
    const { errors } = reply.json() as { errors: { field: string; message: string }[] };
    expect(errors).toHaveLength(100);
    for (const error of errors) expect(error.field.length).toBeLessThanOrEqual(256);
    expect(errors.some((error) => error.field.startsWith('kkkk') && error.field.endsWith('…'))).toBe(true);
    expect(reply.payload.length).toBeLessThan(40_000);
    expect(await counts()).toEqual(before);
    // The probe's own size (5,000 keys, one of 100,000 characters) cannot be a valid sign-up: refused before it is parsed.
    const huge: Record<string, unknown> = { name: 'a', email: 'amplify@example.com', ['k'.repeat(100_000)]: 1 };
    for (let index = 0; index < 5_000; index += 1) huge[`unknown${index}`] = index;
    expect((await app.inject({ method: 'POST', url: '/api/v1/users', payload: huge })).statusCode).toBe(413);
  });
});

describe('cursors carrying the longest sort values', () => {
  it('walks past a title of 200 characters JSON must escape: every nextCursor fits the contract (≤ 2048) and is accepted back', async () => {
    const title = '\u0001'.repeat(200);
    const post = await app.db.prisma.post.create({ data: { title, content: 'escaped', authorId: 1 } });
    const seen: number[] = [];
    let cursor = '';
    let longest = 0;
    for (let guard = 0; guard < 50; guard += 1) {
      // limit 1: the long title, first in title order, is the sort value of the first nextCursor
      const reply = await app.inject({ method: 'GET', url: `/api/v1/posts?sort=title&limit=1&cursor=${encodeURIComponent(cursor)}` });
      expect(reply.statusCode).toBe(200);
      const { items, nextCursor, hasMore } = reply.json().data as { items: { id: number }[]; nextCursor: string | null; hasMore: boolean };
      seen.push(...items.map((item) => item.id));
      longest = Math.max(longest, nextCursor?.length ?? 0);
      if (!hasMore) break;
      cursor = nextCursor!;
    }
    expect(seen).toContain(post.id);
    expect(seen).toHaveLength(await app.db.prisma.post.count());
    expect(longest).toBeGreaterThan(1024); // what the contract allowed before
    expect(longest).toBeLessThanOrEqual(2048);
    await app.db.prisma.post.delete({ where: { id: post.id } });
  });
});

describe('search treats % _ and \\ literally', () => {
  it('matches "100%" but not "1000", "a_b" but not "axb", "c\\d" but not "cd"', async () => {
    for (const name of ['100%', '1000', 'a_b', 'axb', 'c\\d', 'cd']) {
      await app.db.prisma.user.create({ data: { name, email: `lit${name.replace(/\W/g, 'z')}@example.org` } });
    }
    const names = async (q: string) =>
      (
        (await app.inject({ method: 'GET', url: `/api/v1/users?q=${encodeURIComponent(q)}` })).json() as { data: { items: { name: string }[] } }
      ).data.items.map((u) => u.name);
    expect(await names('100%')).toEqual(['100%']);
    expect(await names('a_b')).toEqual(['a_b']);
    expect(await names('c\\d')).toEqual(['c\\d']);
    expect(await names('%')).toEqual(['100%']);
    expect(await names('_')).toEqual(['a_b']);
  });
});
