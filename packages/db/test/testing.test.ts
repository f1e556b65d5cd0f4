// createTestDatabase: isolated, migrated copies per call; countStatements counts what the client sends.
import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { countStatements, createTestDatabase, type Database } from '../src/testing.js';

describe('createTestDatabase', () => {
  const open: Database[] = [];
  const fresh = async () => {
    const db = await createTestDatabase();
    open.push(db);
    return db;
  };
  afterAll(() => Promise.all(open.map((db) => db.close())));

  it('gives migrated databases that do not see each other', async () => {
    const [a, b] = await Promise.all([fresh(), fresh()]);
    expect(a.kind).toBe(process.env.DATABASE_URL ? 'postgres' : 'pglite');
    await a.prisma.user.create({ data: { name: 'Only in A', email: 'a@example.com' } });
    expect(await a.prisma.user.count()).toBe(1);
    expect(await b.prisma.user.count()).toBe(0);
    await b.prisma.user.create({ data: { name: 'Only in B', email: 'a@example.com' } }); // same email: no clash
    await a.close();
    expect(await b.prisma.user.findMany({ select: { name: true } })).toEqual([{ name: 'Only in B' }]);
  });

  it('starts every copy empty, with ids from 1', async () => {
    const db = await fresh();
    const user = await db.prisma.user.create({ data: { name: 'First', email: 'first@example.com' } });
    expect(user.id).toBe(1);
  });

  it('counts SQL statements: a nested read costs the same for 1 or 20 users', async () => {
    const db = await fresh();
    const readAll = () => db.prisma.user.findMany({ include: { posts: { include: { comments: true } } } });
    const seed = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await db.prisma.user.create({
          data: { name: `U${i}`, email: `u${i}-${Date.now()}@example.com`, posts: { create: [{ title: 't', content: 'c' }] } },
        });
      }
    };
    const counter = countStatements(db);
    await seed(1);
    expect(counter.count).toBeGreaterThan(0);
    counter.reset();
    await readAll();
    const withOne = counter.count;
    await seed(19);
    counter.reset();
    const users = await readAll();
    expect(users).toHaveLength(20);
    expect(counter.count).toBe(withOne);
    expect(counter.statements.every((sql) => /select/i.test(sql))).toBe(true);
    counter.stop();
    await db.ping();
    expect(counter.count).toBe(withOne);
  });

  const itPg = process.env.DATABASE_URL ? it : it.skip;
  itPg('drops its PostgreSQL database on close()', async () => {
    const listTestDatabases = async () => {
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await client.connect();
      try {
        const { rows } = await client.query(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [`users_posts_test_${process.pid}_%`]);
        return rows.map((r: { datname: string }) => r.datname);
      } finally {
        await client.end();
      }
    };
    const before = await listTestDatabases();
    const db = await createTestDatabase();
    expect((await listTestDatabases()).length).toBe(before.length + 1);
    await db.close();
    expect(await listTestDatabases()).toEqual(before);
  });
});
