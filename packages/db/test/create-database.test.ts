// createDatabase on a PGlite data directory: migrates at start, CRUD with relations, cascades, reopen, idempotence.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PGlite } from '@electric-sql/pglite';
import { PGLITE_EXTENSIONS } from '@users-posts/schema-engine-bridge/pglite-extensions';
import { applyMigrations, createDatabase, MIGRATIONS_DIR, Prisma, type Database } from '../src/index.js';

describe('createDatabase (PGlite directory)', () => {
  let dir: string;
  let db: Database;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'users-posts-db-'));
    db = await createDatabase({ pgliteDir: path.join(dir, 'pglite') });
  });
  afterAll(async () => {
    await db?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('is a migrated PGlite database', async () => {
    expect(db.kind).toBe('pglite');
    await db.ping();
    const applied = await db.prisma.$queryRaw<
      { migration_name: string }[]
    >`SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL`;
    const onDisk = (await readdir(MIGRATIONS_DIR, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(applied.map((r) => r.migration_name).sort()).toEqual(onDisk.sort());
  });

  it('creates and reads users, posts, comments and orders with relations', async () => {
    const before = Date.now();
    const ada = await db.prisma.user.create({
      data: {
        name: 'Ada',
        email: 'ada@example.com',
        age: 36,
        posts: {
          create: [
            { title: 'First', content: 'Hello' },
            { title: 'Second', content: 'World' },
          ],
        },
        orders: { create: { product: 'Book', quantity: 2, totalCents: 2500 } },
      },
      include: { posts: { orderBy: { id: 'asc' } }, orders: true },
    });
    expect(ada).toMatchObject({ role: 'USER', tokenVersion: 0, passwordHash: null });
    expect(ada.posts.map((p) => p.title)).toEqual(['First', 'Second']);
    expect(ada.orders[0]).toMatchObject({ status: 'pending', quantity: 2, totalCents: 2500 });
    expect(Math.abs(ada.createdAt.getTime() - before)).toBeLessThan(60_000); // timestamps are UTC both ways

    const bob = await db.prisma.user.create({ data: { name: 'Bob', email: 'bob@example.com' } });
    await db.prisma.comment.create({ data: { body: 'Nice', postId: ada.posts[0]!.id, authorId: bob.id } });
    const post = await db.prisma.post.findUniqueOrThrow({
      where: { id: ada.posts[0]!.id },
      include: { author: true, comments: { include: { author: true } } },
    });
    expect(post.author.email).toBe('ada@example.com');
    expect(post.comments.map((c) => c.author.name)).toEqual(['Bob']);
  });

  it('enforces the unique email and the CHECK constraints', async () => {
    await expect(db.prisma.user.create({ data: { name: 'Dup', email: 'ada@example.com' } })).rejects.toMatchObject({ code: 'P2002' });
    await expect(db.prisma.user.create({ data: { name: 'Old', email: 'old@example.com', age: 151 } })).rejects.toThrow(/users_age_range/);
    await expect(db.prisma.user.create({ data: { name: 'Up', email: 'UP@example.com' } })).rejects.toThrow(/users_email_lower_case/);
    const user = await db.prisma.user.findUniqueOrThrow({ where: { email: 'ada@example.com' } });
    await expect(db.prisma.order.create({ data: { userId: user.id, product: 'X', quantity: 0, totalCents: 1 } })).rejects.toThrow(
      /orders_quantity_range/,
    );
    await expect(db.prisma.order.create({ data: { userId: user.id, product: 'X', quantity: 1, totalCents: -1 } })).rejects.toThrow(
      /orders_total_cents_non_negative/,
    );
  });

  it('cascades a user deletion to posts, comments and orders', async () => {
    const ada = await db.prisma.user.findUniqueOrThrow({ where: { email: 'ada@example.com' } });
    await db.prisma.user.delete({ where: { id: ada.id } });
    expect(await db.prisma.post.count({ where: { authorId: ada.id } })).toBe(0);
    expect(await db.prisma.order.count({ where: { userId: ada.id } })).toBe(0);
    expect(await db.prisma.comment.count()).toBe(0); // Bob's comment was on Ada's post
    expect(await db.prisma.user.count()).toBe(1);
  });

  it('reopens the same directory with its data, and migrations are idempotent', async () => {
    await db.close();
    db = await createDatabase({ pgliteDir: path.join(dir, 'pglite') });
    expect(await db.prisma.user.findMany({ select: { email: true } })).toEqual([{ email: 'bob@example.com' }]);
    await db.close();

    const pglite = await PGlite.create(path.join(dir, 'pglite'), { extensions: PGLITE_EXTENSIONS });
    try {
      expect(await applyMigrations({ pglite })).toEqual([]);
    } finally {
      await pglite.close();
    }
    db = await createDatabase({ pgliteDir: path.join(dir, 'pglite') });
    expect(await db.prisma.user.count()).toBe(1);
  });

  it('exports the Prisma namespace and enums', () => {
    expect(Prisma.ModelName).toMatchObject({ User: 'User', Post: 'Post', Comment: 'Comment', Order: 'Order', RefreshToken: 'RefreshToken' });
  });
});
