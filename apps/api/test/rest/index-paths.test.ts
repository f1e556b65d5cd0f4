// Attack and scale (SPEC §4 "At scale", issue 32): every listing, sort, filter, search, cursor page and count of the
// contract has an index path. Each request goes through the real app on a seeded database; every statement it sent is
// then EXPLAINed there with sequential scans disabled, and the plan must read no table whole: no Seq Scan, and no
// index walked without a condition unless a LIMIT stops the walk (nothing that sorts or aggregates in between).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SqlArg } from '@users-posts/db';
import { COMMENT_SORT_FIELDS } from '../../src/services/comments.js';
import { ORDER_SORT_FIELDS } from '../../src/services/orders.js';
import { POST_SORT_FIELDS } from '../../src/services/posts.js';
import { USER_SORT_FIELDS } from '../../src/services/users.js';
import { useTestApp } from '../support/app.js';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Recheck Cond'?: string;
  /** With ANALYZE: rows a node read and threw away. */
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** Nodes that read their whole input before answering: below them, a LIMIT above no longer bounds a scan. */
const BLOCKING = new Set(['Sort', 'Aggregate', 'Hash', 'WindowAgg', 'Materialize', 'Unique', 'SetOp', 'Group']);

/** The scans of `node` that read a whole table (or a whole index) with nothing to stop them. */
function wholeScans(node: PlanNode, bounded = false): string[] {
  const type = node['Node Type'];
  const table = node['Relation Name'];
  const found: string[] = [];
  if (type === 'Seq Scan' && table !== 'row_counts') found.push(`Seq Scan on ${table}`);
  if ((type === 'Index Scan' || type === 'Index Only Scan') && !node['Index Cond'] && !bounded) {
    found.push(`${type} of ${node['Index Name']} without a condition or a LIMIT (the whole index)`);
  }
  const below = type === 'Limit' ? true : BLOCKING.has(type) ? false : bounded;
  for (const child of node.Plans ?? []) found.push(...wholeScans(child, below));
  return found;
}

const suite = useTestApp();
let statements: { text: string; args: readonly SqlArg[] }[] = [];

beforeAll(async () => {
  const { prisma } = suite.app.db;
  // Enough rows that the planner weighs index paths as it does at scale; statistics fresh.
  await prisma.$executeRawUnsafe(
    `INSERT INTO users (name, email, age, role, updated_at)
     SELECT 'user' || g, 'user' || g || '@example.com', CASE WHEN g % 10 = 0 THEN NULL ELSE 18 + g % 70 END,
            CASE WHEN g % 100 = 0 THEN 'ADMIN'::"Role" ELSE 'USER'::"Role" END, now()
     FROM generate_series(1, 5000) AS g`,
  );
  await prisma.$executeRawUnsafe(
    `INSERT INTO posts (title, content, author_id, updated_at)
     SELECT 'Post ' || g, 'Body of post ' || g, (SELECT min(id) FROM users) + g % 5000, now() FROM generate_series(1, 20000) AS g`,
  );
  await prisma.$executeRawUnsafe(
    `INSERT INTO comments (body, post_id, author_id)
     SELECT 'Comment ' || g, (SELECT min(id) FROM posts) + g % 20000, (SELECT min(id) FROM users) + g % 5000 FROM generate_series(1, 20000) AS g`,
  );
  await prisma.$executeRawUnsafe(
    `INSERT INTO orders (user_id, product, quantity, total_cents, status)
     SELECT ${suite.admin.id}, 'Product ' || g, 1, g, 'pending' FROM generate_series(1, 2000) AS g`,
  );
  await prisma.$executeRawUnsafe('ANALYZE');
  // Every statement of the SQL reader (the listings' path), with its parameters.
  const reader = suite.app.db.sql;
  const rows = reader.rows.bind(reader);
  reader.rows = ((text: string, args: readonly SqlArg[] = [], options?: Parameters<typeof rows>[2]) => {
    statements.push({ text, args });
    return rows(text, args, options);
  }) as typeof reader.rows;
});

afterAll(() => {
  statements = [];
});

/** The reads the requests made (not the EXPLAINs of the estimates), those matching `pattern` when given. */
const reads = (pattern?: RegExp) => statements.filter(({ text }) => /^\s*(SELECT|WITH)/i.test(text) && (!pattern || pattern.test(text)));

/** The plan of one statement with sequential scans disabled (in a transaction of its own: SET LOCAL). */
async function planOf(text: string, args: readonly SqlArg[], { analyze = false } = {}): Promise<PlanNode> {
  const [row] = await suite.app.db.prisma.$transaction(async (tx) => {
    await tx.$executeRawUnsafe('SET LOCAL enable_seqscan = off');
    const explain = analyze ? 'EXPLAIN (ANALYZE, FORMAT JSON)' : 'EXPLAIN (FORMAT JSON)';
    return tx.$queryRawUnsafe<{ 'QUERY PLAN': [{ Plan: PlanNode }] | string }[]>(`${explain} ${text}`, ...args);
  });
  const plan = row!['QUERY PLAN'];
  return (typeof plan === 'string' ? JSON.parse(plan) : plan)[0].Plan;
}

/** Sends `request` and returns every whole-table read among the plans of the statements it made. */
async function wholeScansOf(request: { url: string; graphql?: string }): Promise<string[]> {
  statements = [];
  const response = request.graphql
    ? await suite.app.inject({ method: 'POST', url: '/graphql', headers: suite.admin.headers, payload: { query: request.graphql } })
    : await suite.app.inject({ method: 'GET', url: request.url, headers: suite.admin.headers });
  expect({ request, status: response.statusCode }).toEqual({ request, status: 200 });
  const made = reads();
  expect(made.length).toBeGreaterThan(0);
  const found: string[] = [];
  for (const { text, args } of made) {
    for (const scan of wholeScans(await planOf(text, args))) found.push(`${scan}: ${text.slice(0, 160)}`);
  }
  return found;
}

/** Page 1, a deeper offset, and two cursor pages of one listing under one sort. */
async function everyPaging(path: string): Promise<string[]> {
  const join = path.includes('?') ? '&' : '?';
  const found = [...(await wholeScansOf({ url: path })), ...(await wholeScansOf({ url: `${path}${join}offset=40&limit=20` }))];
  statements = [];
  const first = await suite.app.inject({ method: 'GET', url: `${path}${join}cursor=&limit=20`, headers: suite.admin.headers });
  const next = first.json<{ data: { nextCursor: string | null } }>().data.nextCursor;
  found.push(...(await wholeScansOf({ url: `${path}${join}cursor=&limit=20` })));
  if (next) found.push(...(await wholeScansOf({ url: `${path}${join}cursor=${encodeURIComponent(next)}&limit=20` })));
  return found;
}

const sorted = (path: string, fields: readonly string[]) =>
  fields.flatMap((field) => ['asc', 'desc'].map((direction) => `${path}${path.includes('?') ? '&' : '?'}sort=${field},${direction}`));

describe('an index path for every listing of the contract (no table read whole)', () => {
  it('users: every sort in both directions, every filter, the search (name and e-mail), every paging', async () => {
    const urls = [
      ...sorted('/api/v1/users', USER_SORT_FIELDS),
      '/api/v1/users?role=ADMIN',
      '/api/v1/users?role=USER',
      '/api/v1/users?age=42',
      '/api/v1/users?q=user1234',
      '/api/v1/users?q=zzz',
    ];
    for (const url of urls) expect({ url, scans: await everyPaging(url) }).toEqual({ url, scans: [] });
  });

  it("posts, a user's posts, comments and a user's orders: every sort, filter and search, every paging", async () => {
    const author = suite.admin.id + 1;
    const urls = [
      ...sorted('/api/v1/posts', POST_SORT_FIELDS),
      `/api/v1/posts?authorId=${author}`,
      '/api/v1/posts?q=Post%2012345',
      ...sorted(`/api/v1/users/${author}/posts`, POST_SORT_FIELDS),
      ...sorted('/api/v1/comments', COMMENT_SORT_FIELDS),
      '/api/v1/comments?postId=100',
      `/api/v1/comments?userId=${author}`,
      '/api/v1/comments?q=Comment%201999',
      ...sorted(`/api/v1/users/${suite.admin.id}/orders`, ORDER_SORT_FIELDS),
      `/api/v1/users/${suite.admin.id}/orders?status=pending`,
    ];
    for (const url of urls) expect({ url, scans: await everyPaging(url) }).toEqual({ url, scans: [] });
  });

  it('GraphQL: postsConnection with totalCount and after, statistics, users and posts by offset', async () => {
    const first = await suite.app.inject({
      method: 'POST',
      url: '/graphql',
      payload: { query: '{ postsConnection(first: 50) { pageInfo { endCursor } } }' },
    });
    const after = first.json<{ data: { postsConnection: { pageInfo: { endCursor: string } } } }>().data.postsConnection.pageInfo.endCursor;
    const documents = [
      '{ postsConnection(first: 20) { totalCount edges { node { id } } pageInfo { hasNextPage hasPreviousPage } } }',
      `{ postsConnection(first: 20, after: "${after}") { totalCount pageInfo { hasNextPage hasPreviousPage } } }`,
      '{ statistics { totalUsers totalPosts } }',
      '{ users(offset: 100, limit: 20) { id } posts(offset: 100, limit: 20) { id } }',
      '{ recentPosts(limit: 20) { id } }',
    ];
    for (const graphql of documents) expect({ graphql, scans: await wholeScansOf({ url: '/graphql', graphql }) }).toEqual({ graphql, scans: [] });
  });
});

/** Every node of a plan, depth first. */
const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

describe('search that reads only the rare trigrams of a term', () => {
  it('finds exactly the rows the whole term does, asking the trigram indexes for none of the trigrams every name holds', async () => {
    statements = [];
    // An ADMIN searches name and e-mail; every one of the 5 000 names and e-mails holds `use` and `ser`.
    const response = await suite.app.inject({ method: 'GET', url: '/api/v1/users?q=USER1234&limit=100', headers: suite.admin.headers });
    expect(response.statusCode).toBe(200);
    const found = response.json<{ data: { items: { id: string }[] } }>().data.items.map(({ id }) => Number(id));
    const expected = await suite.app.db.prisma.$queryRawUnsafe<{ id: number }[]>(
      `SELECT id FROM users WHERE name ILIKE '%user1234%' OR email ILIKE '%user1234%' ORDER BY id`,
    );
    expect(found.sort((a, b) => a - b)).toEqual(expected.map(({ id }) => id));
    expect(found.length).toBeGreaterThan(0);

    const lookups: string[] = [];
    for (const { text, args } of reads(/ILIKE/)) {
      for (const node of nodesOf(await planOf(text, args))) {
        if (node['Index Name']?.endsWith('_trgm_idx')) lookups.push(node['Index Cond'] ?? '');
      }
    }
    expect(lookups.length).toBeGreaterThan(0);
    for (const lookup of lookups) expect(lookup).not.toMatch(/use|ser/i);
  });
  it('posts: looks in the one index of title and content once, and never matches across the two', async () => {
    const { prisma } = suite.app.db;
    const [straddling, holding] = await prisma.$queryRawUnsafe<{ id: number }[]>(
      `INSERT INTO posts (title, content, author_id, updated_at)
       VALUES ('Quokka sighting', 'Zebrafish report', ${suite.admin.id}, now()), ('Notes', 'a quokka sighting zebrafish', ${suite.admin.id}, now())
       RETURNING id`,
    );
    statements = [];
    // "sighting zebrafish" is in the joined text of the first post ("…sighting Zebrafish…"), in neither of its fields.
    const response = await suite.app.inject({ method: 'GET', url: '/api/v1/posts?q=SIGHTING%20zebrafish' });
    expect(response.json<{ data: { items: { id: string }[] } }>().data.items.map(({ id }) => Number(id))).toEqual([holding!.id]);
    const [joined] = await prisma.$queryRawUnsafe<{ holds: boolean }[]>(
      `SELECT (title || ' ' || content) ILIKE '%sighting zebrafish%' AS holds FROM posts WHERE id = ${straddling!.id}`,
    );
    expect(joined!.holds).toBe(true);

    const indexes: string[] = [];
    for (const { text, args } of reads(/ILIKE/)) {
      for (const node of nodesOf(await planOf(text, args))) if (node['Index Name']?.endsWith('_trgm_idx')) indexes.push(node['Index Name']);
    }
    expect(new Set(indexes)).toEqual(new Set(['posts_search_trgm_idx']));
    await prisma.$executeRawUnsafe(`DELETE FROM posts WHERE id IN (${straddling!.id}, ${holding!.id})`);
  });
});

describe('selective filters read only their matches', () => {
  it('sorts the few rows of a rare filter instead of walking the sort index past rows that sort first', async () => {
    // Every ADMIN has a NULL age, so all of them sort after every other user by age: walking users_age_id_idx for them
    // reads the 4 950 others first. With 1 000 more of them, the planner expects a page of ADMINs early in that walk.
    const { prisma } = suite.app.db;
    await prisma.$executeRawUnsafe(
      `INSERT INTO users (name, email, role, updated_at)
       SELECT 'admin' || g, 'admin' || g || '@example.com', 'ADMIN'::"Role", now() FROM generate_series(1, 1000) AS g`,
    );
    await prisma.$executeRawUnsafe('ANALYZE users');
    const [{ admins }] = await prisma.$queryRawUnsafe<[{ admins: number }]>(`SELECT count(*)::int AS admins FROM users WHERE role = 'ADMIN'`);
    for (const url of ['/api/v1/users?role=ADMIN&sort=age', '/api/v1/users?role=ADMIN&sort=age&limit=10&cursor=']) {
      statements = [];
      const response = await suite.app.inject({ method: 'GET', url, headers: suite.admin.headers });
      expect(response.statusCode).toBe(200);
      let discarded = 0;
      for (const { text, args } of reads()) {
        for (const node of nodesOf(await planOf(text, args, { analyze: true }))) {
          discarded += (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0);
        }
      }
      // At most the filter's own matches (a cursor page's first statement reads every ADMIN for one with an age).
      expect({ url, discarded: discarded <= admins ? 'at most the ADMINs' : discarded }).toEqual({ url, discarded: 'at most the ADMINs' });
    }
    await prisma.$executeRawUnsafe(`DELETE FROM users WHERE email LIKE 'admin%@example.com'`);
    await prisma.$executeRawUnsafe('ANALYZE users');
  });
});

describe('counts that cost a page', () => {
  it('counts exactly up to EXACT_COUNT_LIMIT and says when `total` is the estimate beyond it', async () => {
    // 5 000 + the cast's users, counted by the writes' counters: exact at any size.
    const all = (await suite.app.inject({ method: 'GET', url: '/api/v1/users' })).json<{ data: { total: number; totalExact: boolean } }>();
    expect(all.data.totalExact).toBe(true);
    expect(all.data.total).toBe(await suite.app.db.prisma.user.count());
    // A filter over 10 000 matching rows (20 000 posts match `Post`, a common term): the planner's estimate.
    const many = (await suite.app.inject({ method: 'GET', url: '/api/v1/posts?q=post' })).json<{ data: { total: number; totalExact: boolean } }>();
    expect(many.data).toMatchObject({ totalExact: false });
    expect(many.data.total).toBeGreaterThan(10_000);
    const few = (await suite.app.inject({ method: 'GET', url: '/api/v1/users?role=ADMIN' })).json<{ data: { total: number; totalExact: boolean } }>();
    expect(few.data).toMatchObject({ total: await suite.app.db.prisma.user.count({ where: { role: 'ADMIN' } }), totalExact: true });
  });

  it('keeps statistics exact through inserts, deletes, cascades and concurrent writers', async () => {
    const read = async () =>
      (await suite.app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ statistics { totalUsers totalPosts } }' } })).json<{
        data: { statistics: { totalUsers: number; totalPosts: number } };
      }>().data.statistics;
    const counted = async () => ({ totalUsers: await suite.app.db.prisma.user.count(), totalPosts: await suite.app.db.prisma.post.count() });
    expect(await read()).toEqual(await counted());
    const { prisma } = suite.app.db;
    // Concurrent writers (each its own statement and transaction), then a user deleted with their posts (a cascade).
    await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        prisma.user.create({
          data: { name: `writer ${index}`, email: `writer${index}@example.com`, posts: { create: [{ title: 't', content: 'c' }] } },
        }),
      ),
    );
    const writer = await prisma.user.findFirstOrThrow({ where: { email: 'writer0@example.com' } });
    await prisma.user.delete({ where: { id: writer.id } });
    expect(await read()).toEqual(await counted());
  });
});
