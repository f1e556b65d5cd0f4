// Attack on PostgreSQL's memory through the prepared statements (DATABASE_PREPARED_STATEMENTS, sql-reader.ts): every
// statement prepared by name stays in each connection (~25 KB of the server's memory each), so a client sweeping sorts,
// filters, searches and cursors must not be able to make the server prepare a text per combination.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase } from '@users-posts/db/testing';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { anonymous } from '../../src/auth/principal.js';
import { testConfig } from '../support/config.js';
import { seedUsersWithPosts } from '../support/fixtures.js';

const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;

onPostgres('attack: prepared statements', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    // One connection: pg_prepared_statements then shows everything this app has prepared.
    app = await buildApp(testConfig(), { database: await createTestDatabase({ pool: { max: 1 } }) });
    await seedUsersWithPosts(app.db.prisma, 6, 2);
  });
  afterAll(() => app.close());

  const prepared = async () =>
    (await app.db.sql.rows<{ statement: string }>('SELECT statement FROM pg_prepared_statements')).map((row) => row.statement);
  const get = async (url: string) => {
    const response = await app.inject({ method: 'GET', url });
    expect({ url, status: response.statusCode }).toEqual({ url, status: 200 });
    return response.json() as { data: { nextCursor?: string | null } };
  };

  it('sweeping every sort, filter, search and cursor of the listings prepares only the unfiltered numbered pages', async () => {
    await get('/api/v1/users/1');
    await get('/graphql?query=' + encodeURIComponent('{ users(limit: 3) { id posts { id title } } }'));
    const hot = await prepared();
    expect(hot.length).toBeGreaterThan(0); // the reads by id, by ids and the lists are prepared
    // What an anonymous client may sort by (not the private e-mail, SPEC §3.1).
    const sorts = app.services.users.sortableBy(anonymous);
    expect(sorts).toEqual(['id', 'name', 'age', 'createdAt']);
    for (const sort of sorts) {
      for (const order of ['asc', 'desc']) {
        for (const filter of ['', '&role=USER', '&age=30', '&q=user', '&role=ADMIN&q=x%25_']) {
          await get(`/api/v1/users?sort=${sort}&order=${order}&page=2&pageSize=2${filter}`);
          const first = await get(`/api/v1/users?sort=${sort}&order=${order}&cursor=&limit=2${filter}`);
          if (first.data.nextCursor)
            await get(`/api/v1/users?sort=${sort}&order=${order}&limit=2&cursor=${encodeURIComponent(first.data.nextCursor)}${filter}`);
        }
      }
    }
    for (const filter of ['', '&q=post', '&authorId=1']) await get(`/api/v1/posts?page=1&pageSize=3${filter}`);
    const after = await prepared();
    // Nothing a client chose (a filter, a search, a cursor position) is in a prepared text...
    expect(after.filter((text) => /ILIKE| role = | age = | author_id = \$|WHERE \(/.test(text))).toEqual([]);
    // ...and what the sweep added is the numbered pages of the unfiltered listing: a text per sort and direction, and
    // their count (the posts listing's one sort and count besides), not one per request.
    expect(after.length - hot.length).toBeLessThanOrEqual(sorts.length * 2 + 1 + 2);
  });
});
