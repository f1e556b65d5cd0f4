// Databases for test suites: every call gives a fresh, migrated database that no other test sees — an in-memory
// PGlite copy of a cached migrated template, or, when DATABASE_URL is set, a throwaway PostgreSQL database.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { PGLITE_EXTENSIONS } from '@users-posts/schema-engine-bridge/pglite-extensions';
import { openPGliteDatabase, openPostgresDatabase, type Database, type PoolOptions } from './database.js';
import { PGLITE_POSTGRESQL_CONF } from './embedded/pglite-thread.js';
import { migratedTemplateFile } from './migrated-template.js';

export { countStatements, type StatementCounter } from './statement-counter.js';
export type { Database } from './database.js';
export { TEMPLATE_CACHE_DIR, writeMigratedDataDirectory } from './migrated-template.js';

/**
 * A Blob over bytes already in memory whose arrayBuffer() is one copy. Node's own Blob reads its parts back through a
 * stream in 64 KiB chunks (~300 ms for the 40 MB template, on every copy); PGlite only calls arrayBuffer() and reads
 * `type`. The copy keeps the template intact whatever PGlite does with the buffer it gets.
 */
class InMemoryBlob extends Blob {
  readonly #content: Uint8Array<ArrayBuffer>;

  constructor(content: Uint8Array, type: string) {
    super([], { type });
    this.#content = new Uint8Array(content); // a plain Uint8Array: a Buffer's slice() is a view, not a copy
    Object.defineProperty(this, 'size', { value: content.byteLength }); // Blob's own getter would say 0
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    return Promise.resolve(this.#content.slice().buffer);
  }

  override bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return Promise.resolve(this.#content.slice());
  }
}

let template: Promise<Blob> | undefined;

/** The migrated template (migrated-template.ts), read once per process. */
function migratedTemplate(): Promise<Blob> {
  template ??= (async () => new InMemoryBlob(await readFile(await migratedTemplateFile()), 'application/x-tar'))();
  template.catch(() => (template = undefined));
  return template;
}

/** A new PostgreSQL database on the DATABASE_URL server, migrated, and dropped again by close(). */
async function createPostgresTestDatabase(serverUrl: string, options: TestDatabaseOptions): Promise<Database> {
  const name = `users_posts_test_${process.pid}_${randomUUID().slice(0, 8)}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  let database: Database;
  try {
    database = await openPostgresDatabase(url.href, { migrate: true, ...options });
  } catch (error) {
    await admin(`DROP DATABASE IF EXISTS "${name}"`);
    throw error;
  }
  const close = database.close.bind(database);
  database.close = async () => {
    await close();
    await admin(`DROP DATABASE IF EXISTS "${name}"`);
  };
  return database;
}

/** How a PostgreSQL test database is opened (openPostgresDatabase's options; PGlite's take none). */
export interface TestDatabaseOptions {
  pool?: PoolOptions | undefined;
  preparedStatements?: boolean | undefined;
  onPreparedStatementsOff?: ((reason: Error) => void) | undefined;
}

/**
 * A fresh, migrated, isolated database for a test (call close() when done). PGlite by default (~0.5 s: a copy of
 * the cached template); with DATABASE_URL set, a new database on that server (created, migrated, dropped on close).
 */
export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<Database> {
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl) return createPostgresTestDatabase(serverUrl, options);
  const pglite = await PGlite.create({
    loadDataDir: await migratedTemplate(),
    postgresqlconf: PGLITE_POSTGRESQL_CONF,
    extensions: PGLITE_EXTENSIONS,
  });
  return openPGliteDatabase(pglite, { migrate: false });
}

/** The migrations a PGlite data directory records as applied: how many, and when the last one finished. */
export async function appliedMigrations(dir: string): Promise<{ applied: number; latest: Date | null }> {
  const pglite = await PGlite.create(dir, { extensions: PGLITE_EXTENSIONS });
  try {
    const { rows } = await pglite.query<{ applied: number; latest: Date | null }>(
      'SELECT count(*)::int AS applied, max(finished_at) AS latest FROM _prisma_migrations WHERE finished_at IS NOT NULL',
    );
    return rows[0]!;
  } finally {
    await pglite.close();
  }
}
