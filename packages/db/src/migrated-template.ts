// The migrated PGlite data directory, as an uncompressed tar: built once per set of migrations and PGlite version and
// cached on disk. Test databases are copies of it (testing.ts); the production build ships it (scripts/build.mjs), so
// that a first start copies it instead of running initdb and the migrations.
import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { PGLITE_EXTENSIONS } from '@users-posts/schema-engine-bridge/pglite-extensions';
import { applyMigrations, readMigrations } from './migrate.js';

/** Where migrated PGlite templates are cached between runs (keyed by the migrations and the PGlite version). */
export const TEMPLATE_CACHE_DIR = fileURLToPath(new URL('../../../node_modules/.cache/users-posts/', import.meta.url));

async function templateKey(): Promise<string> {
  const { migrationDirectories, lockfile } = await readMigrations();
  const require = createRequire(import.meta.url);
  const pgliteEntry = require.resolve('@electric-sql/pglite');
  const pgliteVersion = JSON.parse(await readFile(path.join(pgliteEntry, '../../package.json'), 'utf8')).version;
  const hash = createHash('sha256').update(JSON.stringify({ migrationDirectories, lockfile, pgliteVersion }));
  return hash.digest('hex').slice(0, 16);
}

/** Migrate a new in-memory PGlite and dump its data directory (uncompressed: loads ~40% faster than gzip). */
async function buildTemplate(): Promise<Uint8Array> {
  const pglite = await PGlite.create({ extensions: PGLITE_EXTENSIONS });
  try {
    await applyMigrations({ pglite });
    return new Uint8Array(await (await pglite.dumpDataDir('none')).arrayBuffer());
  } finally {
    await pglite.close();
  }
}

/** The cached template's file: read from the disk cache, else built (and cached). */
export async function migratedTemplateFile(): Promise<string> {
  const name = `pglite-template-${await templateKey()}.tar`;
  const file = path.join(TEMPLATE_CACHE_DIR, name);
  // Only whether it is there (its 40 MB are read by whoever copies it).
  if (existsSync(file)) return file;
  const bytes = await buildTemplate();
  await mkdir(TEMPLATE_CACHE_DIR, { recursive: true });
  const tmp = `${file}.${randomUUID()}.tmp`; // parallel jest workers: write aside, then rename atomically
  await writeFile(tmp, bytes);
  await rename(tmp, file);
  for (const old of await readdir(TEMPLATE_CACHE_DIR)) {
    if (old.startsWith('pglite-template-') && old.endsWith('.tar') && old !== name) await rm(path.join(TEMPLATE_CACHE_DIR, old), { force: true });
  }
  return file;
}

/**
 * Writes the migrated template into `dir` (new or empty) as a PGlite data directory: what a server's PGLITE_DIR holds
 * after its first start, without that start's initdb and migrations (seconds of CPU and ~900 MB at their peak). The
 * production build's initial data directory (scripts/pglite-initial.ts), and process tests whose subject is not the
 * first start.
 */
export async function writeMigratedDataDirectory(dir: string): Promise<void> {
  const loadDataDir = new Blob([await readFile(await migratedTemplateFile())], { type: 'application/x-tar' });
  const pglite = await PGlite.create(dir, { loadDataDir, extensions: PGLITE_EXTENSIONS });
  await pglite.close();
}
