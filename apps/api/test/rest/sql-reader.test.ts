// The hot reads through the SQL reader return exactly what the Prisma client returns for the same rows (every field,
// same types), are counted like every statement, and answer as the client does for missing rows and bad ids. The
// collection pager (collections/page.ts) gives, for every collection, sort, direction, filter and search, the rows of
// the Prisma client's findMany with the same where and orderBy, in the same order, across cursor and numbered pages.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Prisma } from '@users-posts/db';
import { countStatements } from '@users-posts/db/testing';
import type { FastifyInstance } from 'fastify';
import { execFileSync } from 'node:child_process';
import type { Principal } from '../../src/auth/principal.js';
import type { PageResult } from '../../src/collections/page.js';
import { repoRoot } from '../../src/paths.js';
import { likeLiteral, type CollectionQuery, type SortDirection } from '../../src/collections/query.js';
import { createTestApp } from '../support/app.js';
import { publicUserKeys } from '../support/shapes.js';
import { accessTokenOf, createUser } from '../support/auth.js';
import { seedUsersWithPosts } from '../support/fixtures.js';

/** The columns of a user that no public read loads (services/users.ts PublicUser). */
const CREDENTIALS = { passwordHash: true, tokenVersion: true } as const;

let app: FastifyInstance;
let ids: number[];
beforeAll(async () => {
  app = await createTestApp();
  const fixture = await seedUsersWithPosts(app.db.prisma, 4, 3);
  ids = fixture.users.map((user) => user.id);
  // Every column set, including the rarely set ones, and a user without posts.
  await app.db.prisma.user.update({
    where: { id: ids[1]! },
    data: { passwordHash: 'not-a-real-hash', emailVerifiedAt: new Date('2026-01-02T03:04:05.678Z'), tokenVersion: 3 },
  });
  ids.push((await app.db.prisma.user.create({ data: { name: 'No Posts', email: 'no-posts@example.com' } })).id);
  // Ties and NULLs for every sort: equal names and ages, NULL ages, equal titles and times, orders in every status.
  const at = new Date('2026-03-04T05:06:07.890Z');
  for (const [i, age] of [null, 30, null, 30].entries()) {
    await app.db.prisma.user.create({ data: { name: 'Twin 100%_\\', email: `twin${i}@example.com`, age, createdAt: at } });
  }
  const posts = await app.db.prisma.post.findMany({ orderBy: { id: 'asc' } });
  for (const [i, post] of posts.entries()) {
    await app.db.prisma.post.update({
      where: { id: post.id },
      data: { title: i % 3 ? 'Same title' : `Title 100% ${i}`, createdAt: i % 2 ? at : post.createdAt },
    });
    await app.db.prisma.comment.create({
      data: { body: i % 2 ? 'Nice_one' : 'nice one', postId: post.id, authorId: ids[i % 3]!, createdAt: i % 4 ? at : undefined },
    });
  }
  const statuses = ['pending', 'paid', 'shipped', 'cancelled'] as const;
  for (let i = 0; i < 14; i++) {
    await app.db.prisma.order.create({
      data: {
        userId: ids[i % 2]!,
        product: i % 3 ? 'Blue widget' : 'Gadget',
        quantity: 1,
        totalCents: (i % 4) * 100,
        status: statuses[i % 4]!,
        createdAt: i % 2 ? at : undefined,
      },
    });
  }
});
afterAll(() => app.close());

describe('hot reads through the SQL reader', () => {
  it('reads users by id, by ids and in pages as the Prisma client reads their public fields (Dates as Dates), never their credentials', async () => {
    const expected = await app.db.prisma.user.findMany({ orderBy: { id: 'asc' }, omit: CREDENTIALS });
    expect(expected.length).toBeGreaterThan(4);
    for (const user of expected) expect(await app.services.users.get(user.id)).toStrictEqual(user);
    expect(await app.services.users.getMany([ids[2]!, 999_999, ids[0]!])).toStrictEqual([expected[2], null, expected[0]]);
    expect(await app.services.users.list({ limit: 3, offset: 1 })).toStrictEqual(expected.slice(1, 4));
    expect(await app.services.users.list()).toStrictEqual(expected);
    // The user with every credential set: none of them is read (its password hash is not in the object at all).
    expect(Object.keys((await app.services.users.get(ids[1]!))!).sort()).toEqual(publicUserKeys());
  });

  it('attack: no public read, REST or GraphQL, anonymous or signed in, loads a password hash or a token version', async () => {
    const accessToken = await accessTokenOf(app, await createUser(app, { email: 'reader@example.com' }));
    const counter = countStatements(app.db);
    try {
      for (const authorization of [undefined, `Bearer ${accessToken}`]) {
        const headers = authorization ? { authorization } : {};
        for (const url of [`/api/v1/users/${ids[1]}`, '/api/v1/users?pageSize=100', '/api/v1/users?limit=100', `/api/v1/users/${ids[1]}/posts`]) {
          expect({ url, status: (await app.inject({ method: 'GET', url, headers })).statusCode }).toEqual({ url, status: 200 });
        }
        const me = authorization ? 'currentUser { id name }' : ''; // signed in only: it is an error (no data) anonymously
        const query = `{ user(id: "${ids[1]}") { id name email } users(limit: 50) { id posts { id author { id email role } } } ${me} }`;
        const response = await app.inject({ method: 'POST', url: '/graphql', headers, payload: { query } });
        expect(response.json()).toMatchObject({ data: { user: { id: String(ids[1]) } } });
        expect(response.json().errors).toBeUndefined();
      }
      expect(counter.count).toBeGreaterThan(8);
      // Signed in, the request reads the caller's role and token version to check the token (auth, not a public read).
      const reads = counter.statements.filter(
        (sql) =>
          !/^SELECT role, token_version AS "tokenVersion"(, EXISTS \(SELECT 1 FROM sessions WHERE id = \$2 AND user_id = \$1\) AS live)? FROM users WHERE id = \$1$/.test(
            sql,
          ),
      );
      expect(reads.filter((sql) => /password_hash|token_version/.test(sql))).toEqual([]);
    } finally {
      counter.stop();
    }
  });

  it('reads timestamps and dates as UTC in a process of another time zone (as Prisma does)', () => {
    // A process of its own: the time zone is the process's (jest gives tests a copy of process.env). pg's own parsers
    // would read both columns in America/New_York, five hours off.
    const script = [
      "import { createDatabase } from './packages/db/src/index.ts';",
      "const db = await createDatabase({ databaseUrl: process.env.DATABASE_URL, pgliteDir: 'memory://', migrate: false });",
      `console.log(JSON.stringify(await db.sql.rows(\`SELECT TIMESTAMP '2026-01-02 03:04:05.678' AS "at", DATE '2026-01-02' AS "day"\`)));`,
      'await db.close();',
    ].join('\n');
    const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: repoRoot,
      env: { ...process.env, TZ: 'America/New_York' },
      encoding: 'utf8',
    });
    expect(JSON.parse(output.trim().split('\n').at(-1)!)).toEqual([{ at: '2026-01-02T03:04:05.678Z', day: '2026-01-02T00:00:00.000Z' }]);
  });

  it('reads posts by id, by author (first 100 each, oldest first) and in pages exactly as the Prisma client does', async () => {
    const expected = await app.db.prisma.post.findMany({ orderBy: { id: 'asc' } });
    for (const post of expected) expect(await app.services.posts.get(post.id)).toStrictEqual(post);
    const byAuthor = await app.services.posts.listByAuthors([ids[1]!, ids.at(-1)!, ids[0]!]);
    expect(byAuthor).toStrictEqual([expected.filter((post) => post.authorId === ids[1]), [], expected.filter((post) => post.authorId === ids[0])]);
    // Only the fields asked for (GraphQL's selection), with id and authorId always.
    const titles = await app.services.posts.listByAuthors([ids[0]!, ids[1]!], ['title']);
    expect(titles).toStrictEqual(
      [ids[0], ids[1]].map((id) => expected.filter((post) => post.authorId === id).map(({ id, authorId, title }) => ({ id, title, authorId }))),
    );
    const dated = await app.services.posts.listByAuthors([ids[1]!], ['createdAt', 'content']);
    expect(dated).toStrictEqual([
      expected.filter((post) => post.authorId === ids[1]).map(({ id, authorId, createdAt, content }) => ({ id, authorId, content, createdAt })),
    ]);
    expect(await app.services.posts.list({ limit: 2, offset: 2 })).toStrictEqual(expected.slice(2, 4));
  });

  it('answers null for ids that are not there or not ids, without a statement for the latter', async () => {
    const counter = countStatements(app.db);
    try {
      expect(await app.services.users.get('abc')).toBeNull();
      expect(await app.services.posts.get('1e3')).toBeNull();
      expect(counter.count).toBe(0);
      expect(await app.services.users.get(2_147_483_647)).toBeNull();
      expect(await app.services.posts.get(2_147_483_647)).toBeNull();
      expect(counter.count).toBe(2); // counted like the client's statements (the N+1 tests rely on it)
    } finally {
      counter.stop();
    }
  });
});

/** A collection query as the REST door parses it: `search` is the raw `q`. */
function query(sort: string, direction: SortDirection, paging: CollectionQuery['paging'], search?: string): CollectionQuery {
  return { paging, sort: { field: sort, direction }, fields: undefined, search: search === undefined ? undefined : likeLiteral(search) };
}

/** Prisma's orderBy for a sort: NULLs last for nullable fields, then the id in the same direction. */
function prismaOrder(sort: string, direction: SortDirection, nullable: boolean): object[] {
  if (sort === 'id') return [{ id: direction }];
  return [nullable ? { [sort]: { sort: direction, nulls: 'last' } } : { [sort]: direction }, { id: direction }];
}

interface Listing {
  name: string;
  sorts: readonly string[];
  nullable?: string;
  /** The listing through the service: the pager. */
  page(query: CollectionQuery): Promise<PageResult<{ id: number }>>;
  /** The same listing through the Prisma client. */
  expected(orderBy: object[]): Promise<{ id: number }[]>;
}

/** Every row of a listing, page after page through its cursors (limit 3). */
async function walkCursors(listing: Listing, sort: string, direction: SortDirection, search?: string): Promise<{ id: number }[]> {
  const rows: { id: number }[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const result = await listing.page(query(sort, direction, { mode: 'cursor', cursor, limit: 3 }, search));
    if (result.mode !== 'cursor') throw new Error('expected a cursor page');
    rows.push(...result.items);
    if (!result.nextCursor) return rows;
    cursor = result.nextCursor;
  }
  throw new Error('cursor pages never ended');
}

/** Orders are read as an ADMIN would (the signed-request service principal): any user's. */
const ADMIN: Principal = { kind: 'service', role: 'ADMIN', via: 'signature' };

describe('the collection pager against the Prisma client', () => {
  // Prisma's `contains` does not escape LIKE wildcards: it is given the escaped literal, as the pager is.
  const insensitive = (text: string) => ({ contains: likeLiteral(text), mode: 'insensitive' as const });
  const listings = (): Listing[] => [
    {
      name: 'users (NULL ages last both ways)',
      sorts: ['id', 'name', 'email', 'age', 'createdAt'],
      nullable: 'age',
      page: (q) => app.services.users.page(ADMIN, q as CollectionQuery<never>),
      expected: (orderBy) => app.db.prisma.user.findMany({ orderBy: orderBy as Prisma.UserOrderByWithRelationInput[], omit: CREDENTIALS }),
    },
    {
      name: 'users with role=USER, age=30, searched for "100%_\\"',
      sorts: ['name', 'age'],
      nullable: 'age',
      page: (q) => app.services.users.page(ADMIN, { ...q, search: likeLiteral('100%_\\') } as CollectionQuery<never>, { role: 'USER', age: 30 }),
      expected: (orderBy) =>
        app.db.prisma.user.findMany({
          where: { role: 'USER', age: 30, OR: [{ name: insensitive('100%_\\') }, { email: insensitive('100%_\\') }] },
          orderBy: orderBy as Prisma.UserOrderByWithRelationInput[],
          omit: CREDENTIALS,
        }),
    },
    {
      name: "posts of one author, and posts searched for '100%'",
      sorts: ['id', 'title', 'createdAt'],
      page: (q) => app.services.posts.page(q as CollectionQuery<never>, { authorId: ids[0] }),
      expected: (orderBy) => app.db.prisma.post.findMany({ where: { authorId: ids[0] }, orderBy: orderBy as Prisma.PostOrderByWithRelationInput[] }),
    },
    {
      name: 'posts searched for "100%" (a literal %)',
      sorts: ['title', 'createdAt'],
      page: (q) => app.services.posts.page({ ...q, search: likeLiteral('100%') } as CollectionQuery<never>),
      expected: (orderBy) =>
        app.db.prisma.post.findMany({
          where: { OR: [{ title: insensitive('100%') }, { content: insensitive('100%') }] },
          orderBy: orderBy as Prisma.PostOrderByWithRelationInput[],
        }),
    },
    {
      name: 'comments searched for "NICE_" (a literal _, any case)',
      sorts: ['id', 'createdAt'],
      page: (q) => app.services.comments.page({ ...q, search: likeLiteral('NICE_') } as CollectionQuery<never>),
      expected: (orderBy) =>
        app.db.prisma.comment.findMany({ where: { body: insensitive('NICE_') }, orderBy: orderBy as Prisma.CommentOrderByWithRelationInput[] }),
    },
    {
      name: 'comments by one author',
      sorts: ['id', 'createdAt'],
      page: (q) => app.services.comments.page(q as CollectionQuery<never>, { userId: ids[0] }),
      expected: (orderBy) =>
        app.db.prisma.comment.findMany({ where: { authorId: ids[0] }, orderBy: orderBy as Prisma.CommentOrderByWithRelationInput[] }),
    },
    {
      name: "a user's orders (status in enum order)",
      sorts: ['id', 'createdAt', 'totalCents', 'status'],
      page: (q) => app.services.orders.page(ADMIN, ids[0]!, q as CollectionQuery<never>),
      expected: (orderBy) => app.db.prisma.order.findMany({ where: { userId: ids[0] }, orderBy: orderBy as Prisma.OrderOrderByWithRelationInput[] }),
    },
    {
      name: "a user's paid orders searched for 'widget'",
      sorts: ['status', 'totalCents'],
      page: (q) => app.services.orders.page(ADMIN, ids[1]!, { ...q, search: likeLiteral('widget') } as CollectionQuery<never>, { status: 'paid' }),
      expected: (orderBy) =>
        app.db.prisma.order.findMany({
          where: { userId: ids[1], status: 'paid', product: insensitive('widget') },
          orderBy: orderBy as Prisma.OrderOrderByWithRelationInput[],
        }),
    },
  ];

  it("gives every row in the client's order through cursors, and the same pages and totals by number", async () => {
    for (const listing of listings()) {
      for (const sort of listing.sorts) {
        for (const direction of ['asc', 'desc'] as const) {
          const expected = await listing.expected(prismaOrder(sort, direction, sort === listing.nullable));
          const label = `${listing.name}, sort ${sort} ${direction}`;
          expect({ label, rowsToOrder: expected.length > 1 }).toEqual({ label, rowsToOrder: true }); // the fixture is not empty there
          expect({ label, rows: await walkCursors(listing, sort, direction) }).toStrictEqual({ label, rows: expected });
          const second = await listing.page(query(sort, direction, { mode: 'page', page: 2, pageSize: 3 }));
          expect({ label, second }).toStrictEqual({
            label,
            second: {
              mode: 'page',
              items: expected.slice(3, 6),
              total: expected.length,
              page: 2,
              pageSize: 3,
              totalPages: Math.ceil(expected.length / 3),
              totalExact: true,
            },
          });
        }
      }
    }
  });

  it('answers an empty page past the end, even for a page number beyond any integer column', async () => {
    const far = await app.services.users.page(ADMIN, query('id', 'asc', { mode: 'page', page: 1e15, pageSize: 100 }) as CollectionQuery<never>);
    expect(far).toMatchObject({ mode: 'page', items: [], page: 1e15 });
  });
});
