// `pnpm db:migration` (scripts/db-migration.ts) on a copy of the migration history: a schema edit becomes a migration
// folder, an unchanged schema is refused and writes nothing.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, jest, test } from '@jest/globals';
import { createMigration, migrationSlug, nextTimestamp, NothingToMigrateError, pendingMigrationSql } from '../db-migration.js';

/**
 * The outer bound on each test, for a run of the Prisma CLI that hangs; the tests wait on the CLI's exit
 * (scripts/db-migration.ts resolves on it). Each run (one in most tests, two in the gate's) starts the WebAssembly schema
 * engine, which compiles its WebAssembly and replays the migration history into an in-memory PGlite: ~4 s of a quiet
 * 2-core machine, many times that on a loaded one (36 s for the gate's two runs beside 8 busy loops; a full `pnpm test`
 * beside a load of ~9 failed one of these tests).
 */
jest.setTimeout(240_000);

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const work = mkdtempSync(path.join(os.tmpdir(), 'db-migration-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A copy of prisma/migrations and of prisma/schema.prisma (edited by `edit`), in a folder of their own. */
function copyOfProject(name: string, edit: (schema: string) => string = (schema) => schema) {
  const migrationsDir = path.join(work, name, 'migrations');
  cpSync(path.join(repoRoot, 'prisma/migrations'), migrationsDir, { recursive: true });
  const schemaPath = path.join(work, name, 'schema.prisma');
  writeFileSync(schemaPath, edit(readFileSync(path.join(repoRoot, 'prisma/schema.prisma'), 'utf8')));
  return { migrationsDir, schemaPath, folders: () => readdirSync(migrationsDir).sort() };
}

describe('createMigration', () => {
  test('a column added to the Prisma schema becomes a new migration folder, after the newest one', async () => {
    const project = copyOfProject('edited', (schema) => schema.replace(/^(\s+age\s+Int\?\n)/m, '$1  bio String? @db.VarChar(500)\n'));
    const before = project.folders();
    const { file, sql } = await createMigration({ name: 'Add user bio', ...project, now: new Date('2020-01-01T00:00:00Z') });
    expect(sql).toMatch(/ALTER TABLE "users" ADD COLUMN\s+"bio" VARCHAR\(500\);/);
    const added = project.folders().filter((folder) => !before.includes(folder));
    // The clock (2020) is behind the history: the folder still sorts last, one second after the newest.
    expect(added).toEqual([expect.stringMatching(/^\d{14}_add_user_bio$/)]);
    expect(added[0]! > before.filter((folder) => /^\d{14}_/.test(folder)).at(-1)!).toBe(true);
    expect(file).toBe(path.join(project.migrationsDir, added[0]!, 'migration.sql'));
    expect(readFileSync(file, 'utf8')).toBe(`${sql.trimEnd()}\n`);
  });

  test('a schema the history already gives is refused, and nothing is written', async () => {
    const project = copyOfProject('unchanged');
    const before = project.folders();
    const refusal = await createMigration({ name: 'nothing', ...project }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(NothingToMigrateError);
    expect((refusal as Error).message).toMatch(/^nothing to migrate: .*no migration was written/);
    expect(project.folders()).toEqual(before);
  });

  test('the gate of pnpm contracts:check: a model change no migration holds is pending, naming its column; the repository has none', async () => {
    const project = copyOfProject('pending', (schema) => schema.replace(/^(\s+age\s+Int\?\n)/m, '$1  bio String?\n'));
    expect(await pendingMigrationSql(project)).toMatch(/ALTER TABLE "users" ADD COLUMN\s+"bio" TEXT;/);
    expect(await pendingMigrationSql()).toBeNull();
  });

  test('a name with no letter or digit is refused before anything runs', async () => {
    await expect(createMigration({ name: ' -- ' })).rejects.toThrow(/needs a name/);
  });
});

test('names and timestamps follow Prisma: snake_case, UTC YYYYMMDDHHMMSS, strictly after the newest migration', () => {
  expect(migrationSlug(' Add User-Bio!  ')).toBe('add_user_bio');
  const now = new Date('2026-11-27T07:13:12Z');
  expect(nextTimestamp(['20261122032513_init', 'migration_lock.toml'], now)).toBe('20261127071312');
  expect(nextTimestamp(['20261127080000_later'], now)).toBe('20261127080001');
  expect(nextTimestamp(['20261231235959_year_end'], now)).toBe('20270101000000');
});
