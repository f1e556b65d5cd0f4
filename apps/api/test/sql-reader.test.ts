// The hot reads through the SQL reader return exactly what the Prisma client returns for the same rows (every field,
// same types), are counted like every statement, and answer as the client does for missing rows and bad ids.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { countStatements } from '@users-posts/db/testing';
import type { FastifyInstance } from 'fastify';
import { createTestApp } from './support/app.js';
import { seedUsersWithPosts } from './support/fixtures.js';

let app: FastifyInstance;
let ids: number[];
beforeAll(async () => {
  app = await createTestApp();
  const fixture = await seedUsersWithPosts(app.db.prisma, 4, 3);
  ids = fixture.users.map((user) => user.id);
  // Every column set, including the rarely set ones, and a user without posts.
  await app.db.prisma.user.update({ where: { id: ids[1]! }, data: { passwordHash: 'not-a-real-hash', emailVerifiedAt: new Date('2026-01-02T03:04:05.678Z'), tokenVersion: 3 } });
  ids.push((await app.db.prisma.user.create({ data: { name: 'No Posts', email: 'no-posts@example.com' } })).id);
});
afterAll(() => app.close());

describe('hot reads through the SQL reader', () => {
  it('reads users by id, by ids and in pages exactly as the Prisma client does (every field, Dates as Dates)', async () => {
    const expected = await app.db.prisma.user.findMany({ orderBy: { id: 'asc' } });
    expect(expected.length).toBeGreaterThan(4);
    for (const user of expected) expect(await app.services.users.get(user.id)).toStrictEqual(user);
    expect(await app.services.users.getMany([ids[2]!, 999_999, ids[0]!])).toStrictEqual([expected[2], null, expected[0]]);
    expect(await app.services.users.list({ limit: 3, offset: 1 })).toStrictEqual(expected.slice(1, 4));
    expect(await app.services.users.list()).toStrictEqual(expected);
    const verified = (await app.services.users.get(ids[1]!))!;
    expect(verified.emailVerifiedAt).toBeInstanceOf(Date);
    expect(verified.emailVerifiedAt!.toISOString()).toBe('2026-01-02T03:04:05.678Z');
  });

  it('reads posts by id, by author (first 100 each, oldest first) and in pages exactly as the Prisma client does', async () => {
    const expected = await app.db.prisma.post.findMany({ orderBy: { id: 'asc' } });
    for (const post of expected) expect(await app.services.posts.get(post.id)).toStrictEqual(post);
    const byAuthor = await app.services.posts.listByAuthors([ids[1]!, ids.at(-1)!, ids[0]!]);
    expect(byAuthor).toStrictEqual([
      expected.filter((post) => post.authorId === ids[1]),
      [],
      expected.filter((post) => post.authorId === ids[0]),
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
