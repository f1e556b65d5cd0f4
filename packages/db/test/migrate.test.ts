// applyMigrations in-process: a failing script is reported (not recorded as applied), and is not retried silently.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PGlite } from '@electric-sql/pglite';
import { PGLITE_EXTENSIONS } from '@users-posts/schema-engine-bridge/pglite-extensions';
import { applyMigrations, readMigrations } from '../src/migrate.js';

describe('applyMigrations', () => {
  let dir: string;
  let pglite: PGlite;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'users-posts-migrations-'));
    await writeFile(path.join(dir, 'migration_lock.toml'), 'provider = "postgresql"\n');
    await mkdir(path.join(dir, '1_ok'));
    await writeFile(path.join(dir, '1_ok', 'migration.sql'), `CREATE TABLE a (id int); INSERT INTO a VALUES (1); -- a ";" in a comment`);
    await mkdir(path.join(dir, '2_bad'));
    await writeFile(path.join(dir, '2_bad', 'migration.sql'), 'CREATE TABLE b (;');
    pglite = await PGlite.create({ extensions: PGLITE_EXTENSIONS });
  });
  afterAll(async () => {
    await pglite?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('reads migration folders in name order, as the CLI does', async () => {
    const list = await readMigrations(dir);
    expect(list.migrationDirectories.map((m) => m.path)).toEqual(['1_ok', '2_bad']);
    expect(list.lockfile.content).toContain('postgresql');
  });

  it('rejects on a failing script and records it as failed', async () => {
    await expect(applyMigrations({ pglite }, { migrationsDir: dir })).rejects.toThrow(/syntax error/);
    const { rows } = await pglite.query<{ migration_name: string; finished: boolean }>(
      'SELECT migration_name, finished_at IS NOT NULL AS finished FROM _prisma_migrations ORDER BY migration_name',
    );
    expect(rows).toEqual([
      { migration_name: '1_ok', finished: true },
      { migration_name: '2_bad', finished: false },
    ]);
    await expect(applyMigrations({ pglite }, { migrationsDir: dir })).rejects.toMatchObject({ code: 'P3009' });
  });
});

describe('applyMigrations on an up-to-date database (the start-up fast path)', () => {
  let dir: string;
  let pglite: PGlite;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'users-posts-migrations-'));
    await writeFile(path.join(dir, 'migration_lock.toml'), 'provider = "postgresql"\n');
    await mkdir(path.join(dir, '1_first'));
    await writeFile(path.join(dir, '1_first', 'migration.sql'), 'CREATE TABLE first (id int);');
    pglite = await PGlite.create({ extensions: PGLITE_EXTENSIONS });
  });
  afterAll(async () => {
    await pglite?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('applies, then does nothing, then still applies a migration added later', async () => {
    expect(await applyMigrations({ pglite }, { migrationsDir: dir })).toEqual(['1_first']);
    expect(await applyMigrations({ pglite }, { migrationsDir: dir })).toEqual([]);
    await mkdir(path.join(dir, '2_second'));
    await writeFile(path.join(dir, '2_second', 'migration.sql'), 'CREATE TABLE second (id int);');
    expect(await applyMigrations({ pglite }, { migrationsDir: dir })).toEqual(['2_second']);
    const { rows } = await pglite.query<{ present: boolean }>(`SELECT to_regclass('second') IS NOT NULL AS present`);
    expect(rows).toEqual([{ present: true }]);
  });
});
