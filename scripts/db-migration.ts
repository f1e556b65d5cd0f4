// `pnpm db:migration <name>`: writes prisma/migrations/<timestamp>_<name>/migration.sql, the SQL that takes a database
// from the migration history to prisma/schema.prisma, without any database installed.
//
// The diff is Prisma's own (`prisma migrate diff --from-migrations … --to-schema … --script`), run by the CLI through
// the WebAssembly schema engine of packages/schema-engine-bridge (prisma/prisma.config.ts points the CLI at it). The
// datasource is forced to `memory://`: the history is replayed into an in-memory PGlite (the shadow database), so the
// command neither needs PostgreSQL nor opens the developer's ./.data/pglite (which a running server holds). Not
// `prisma migrate dev --create-only`: it first migrates the development database, and writes an empty migration
// when there is nothing to do, which this command refuses.
import { spawn } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const prismaCli = path.join(repoRoot, 'node_modules/prisma/build/index.js');

export interface MigrationOptions {
  name: string;
  migrationsDir?: string;
  schemaPath?: string;
  now?: Date;
}

export class NothingToMigrateError extends Error {}

/** Prisma's own convention for migration folder names: lower-case words joined by `_`. */
export function migrationSlug(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

const stampOf = (date: Date) => date.toISOString().replace(/\D/g, '').slice(0, 14); // YYYYMMDDHHMMSS, UTC like Prisma's

/**
 * The new folder's timestamp: now, or one second after the newest migration when the clock is behind it (migrations
 * apply in name order, so a new one must sort last).
 */
export function nextTimestamp(existing: readonly string[], now: Date): string {
  const latest = existing
    .map((name) => /^(\d{14})_/.exec(name)?.[1])
    .filter((stamp): stamp is string => stamp !== undefined)
    .sort()
    .at(-1);
  const stamp = stampOf(now);
  if (!latest || stamp > latest) return stamp;
  const part = (from: number, to: number) => Number(latest.slice(from, to));
  return stampOf(new Date(Date.UTC(part(0, 4), part(4, 6) - 1, part(6, 8), part(8, 10), part(10, 12), part(12, 14) + 1)));
}

/** Runs the Prisma CLI; resolves with its exit code and output. */
function prisma(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [prismaCli, ...args], {
      cwd: repoRoot,
      env: { ...process.env, DATABASE_URL: 'memory://' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/**
 * The SQL that takes the history in `migrationsDir` to the schema at `schemaPath`, or null when the history already
 * gives the schema (what `pnpm contracts:check` asks: a model change without its migration fails there, naming it).
 */
export async function pendingMigrationSql(options: Omit<MigrationOptions, 'name' | 'now'> = {}): Promise<string | null> {
  const migrationsDir = options.migrationsDir ?? path.join(repoRoot, 'prisma/migrations');
  const schemaPath = options.schemaPath ?? path.join(repoRoot, 'prisma/schema.prisma');
  const diff = await prisma([
    'migrate',
    'diff',
    '--config',
    path.join(repoRoot, 'prisma/prisma.config.ts'),
    '--from-migrations',
    migrationsDir,
    '--to-schema',
    schemaPath,
    '--script',
    '--exit-code', // 0: no difference, 2: a difference (the script on stdout), 1: an error
  ]);
  if (diff.code === 0) return null;
  if (diff.code !== 2) throw new Error(`prisma migrate diff failed (exit ${diff.code}):\n${diff.stderr.trim() || diff.stdout.trim()}`);
  return diff.stdout;
}

/**
 * The SQL from the history in `migrationsDir` to the schema at `schemaPath`, written as a new migration folder; returns
 * its path. Throws NothingToMigrateError when they already agree.
 */
export async function createMigration(options: MigrationOptions): Promise<{ file: string; sql: string }> {
  const slug = migrationSlug(options.name);
  if (!slug) throw new Error('a migration needs a name of letters or digits: `pnpm db:migration add_user_bio`');
  const migrationsDir = options.migrationsDir ?? path.join(repoRoot, 'prisma/migrations');
  const schemaPath = options.schemaPath ?? path.join(repoRoot, 'prisma/schema.prisma');
  const sql = await pendingMigrationSql({ migrationsDir, schemaPath });
  if (sql === null) {
    throw new NothingToMigrateError(
      `nothing to migrate: ${path.relative(repoRoot, migrationsDir)} already gives ${path.relative(repoRoot, schemaPath)} ` +
        '(edit the Prisma schema first; no migration was written)',
    );
  }
  const existing = (await readdir(migrationsDir, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  const folder = path.join(migrationsDir, `${nextTimestamp(existing, options.now ?? new Date())}_${slug}`);
  await mkdir(folder); // fails if it exists: never overwrite a migration
  const file = path.join(folder, 'migration.sql');
  await writeFile(file, sql.endsWith('\n') ? sql : `${sql}\n`, { flag: 'wx' });
  return { file, sql };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const name = process.argv.slice(2).join(' ');
  try {
    const { file, sql } = await createMigration({ name });
    console.log(`Created ${path.relative(repoRoot, file)}:\n\n${sql.trim()}\n`);
    if (/^\/\*\s*Warnings:/m.test(sql)) console.log('Read the warnings at its top: the migration may lose data.');
    console.log('Review it, commit it with the schema change; `pnpm db:migrate` (or the next start of the server) applies it.');
  } catch (error) {
    console.error(`db:migration: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
