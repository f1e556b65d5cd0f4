// Applies prisma/migrations in-process through the WASM schema engine: `prisma migrate deploy` without the CLI.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { MigrationList } from '@users-posts/schema-engine-bridge';

/** The repository's `prisma/migrations` folder. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../prisma/migrations', import.meta.url));

/**
 * Where to migrate: an open PGlite instance (left open) or a PostgreSQL URL; with `pool` (a pool on that URL), the
 * start-up check asks through it instead of opening a connection of its own (the embedded database's pool of one:
 * its connection is then open, and warm, for the first request).
 */
export type MigrationTarget = { pglite: PGlite } | { databaseUrl: string; pool?: pg.Pool };

/** Read a migrations folder the way the Prisma CLI does (one `<name>/migration.sql` per folder, sorted by name). */
export async function readMigrations(dir: string = MIGRATIONS_DIR): Promise<MigrationList> {
  const lockPath = 'migration_lock.toml';
  const lockContent = await readFile(path.join(dir, lockPath), 'utf8').catch(() => null);
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort((a, b) => a.localeCompare(b));
  const migrationDirectories = await Promise.all(
    names.map(async (name) => {
      const file = path.join(dir, name, 'migration.sql');
      const content = await readFile(file, 'utf8').then(
        (value) => ({ tag: 'ok' as const, value }),
        (error: Error) => ({ tag: 'error' as const, value: error.message }),
      );
      return { path: name, migrationFile: { path: 'migration.sql', content } };
    }),
  );
  return { baseDir: dir, lockfile: { path: lockPath, content: lockContent }, shadowDbInitScript: '', migrationDirectories };
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
}

/** Anything that answers a query with rows: PGlite, a pg pool or a pg client. */
type Queryable = { query<T>(text: string): Promise<{ rows: T[] }> };

/** Rows of migrations that finished and were not rolled back; undefined when the history table does not exist. */
async function appliedMigrationsIn(database: Queryable): Promise<AppliedRow[] | undefined> {
  const { rows } = await database.query<{ present: boolean }>(`SELECT to_regclass('_prisma_migrations') IS NOT NULL AS present`);
  if (!rows[0]?.present) return undefined;
  return (
    await database.query<AppliedRow>(
      `SELECT migration_name, checksum FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    )
  ).rows;
}

/** appliedMigrationsIn the target: its PGlite or pool as they are, else a connection of its own for the question. */
async function appliedMigrations(target: MigrationTarget): Promise<AppliedRow[] | undefined> {
  if ('pglite' in target) return appliedMigrationsIn(target.pglite);
  if (target.pool) return appliedMigrationsIn(target.pool);
  const client = new pg.Client({ connectionString: target.databaseUrl });
  await client.connect();
  try {
    return await appliedMigrationsIn(client);
  } finally {
    await client.end();
  }
}

/**
 * The start-up fast path: true when every migration folder is recorded as applied with the same checksum (the
 * SHA-256 of migration.sql, as Prisma records it). Anything else (pending, failed, edited, no history) returns
 * false and goes through the engine, which applies or reports it. Saves loading the WASM engine on most starts.
 */
async function everyMigrationApplied(target: MigrationTarget, list: MigrationList): Promise<boolean> {
  const applied = await appliedMigrations(target);
  if (!applied) return false;
  const checksums = new Map(applied.map((row) => [row.migration_name, row.checksum]));
  return list.migrationDirectories.every(({ path: name, migrationFile: { content } }) => {
    if (content.tag !== 'ok') return false;
    return checksums.get(name) === createHash('sha256').update(content.value).digest('hex');
  });
}

// applyMigrations needs no models, only the provider; the engine requires at least one schema file.
const DATASOURCE_ONLY: [string, string][] = [['schema.prisma', 'datasource db {\n  provider = "postgresql"\n}\n']];

/**
 * Apply the migrations not yet applied (idempotent: an up-to-date database is left alone). Returns the names of
 * the migrations applied now. Throws on a failed or edited migration, as `prisma migrate deploy` does.
 */
export async function applyMigrations(
  target: MigrationTarget,
  options: { migrationsDir?: string; migrations?: Promise<MigrationList> } = {},
): Promise<string[]> {
  const migrationsList = await (options.migrations ?? readMigrations(options.migrationsDir));
  if (await everyMigrationApplied(target, migrationsList)) return [];
  // Loaded only now: the engine's glue and its adapters (PGlite's JavaScript among them) are not needed on most starts.
  const { openSchemaEngine, pgliteMigrationAdapter, pgMigrationAdapter } = await import('@users-posts/schema-engine-bridge');
  const factory = 'pglite' in target ? pgliteMigrationAdapter(target.pglite) : pgMigrationAdapter(target.databaseUrl);
  try {
    const engine = await openSchemaEngine({ adapterFactory: factory, datamodels: DATASOURCE_ONLY });
    try {
      const filters = { externalTables: [], externalEnums: [] };
      const { appliedMigrationNames } = await engine.applyMigrations({ migrationsList, filters });
      return appliedMigrationNames;
    } finally {
      engine.free();
    }
  } finally {
    await factory.close();
  }
}
