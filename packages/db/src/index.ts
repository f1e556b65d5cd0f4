// Public API of @users-posts/db: createDatabase (PGlite or PostgreSQL, migrated) and the generated Prisma types.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { optimiseWebAssemblyFromEnv } from '@users-posts/schema-engine-bridge/webassembly-tier';
import { openPostgresDatabase, type Database, type PoolOptions } from './database.js';
import { openEmbeddedDatabase } from './embedded/embedded-database.js';

export { startEmbeddedDatabase, type StartingDatabase } from './embedded/embedded-database.js';
export type { PGliteThread } from './embedded/pglite-thread.js';

export type { Database, DatabaseKind, PoolOptions, PoolStats } from './database.js';
export { PREPARED, type ReadOptions, type SqlArg, type SqlReader } from './sql-reader.js';
export { DEFAULT_POOL_OPTIONS } from './database.js';
export { isDatabaseUnavailableError } from './unavailable.js';
export { DirectoryLockedError, directoryOwner, lockDirectory, type DirectoryOwner } from '@users-posts/schema-engine-bridge/directory-lock';
export { applyMigrations, readMigrations, MIGRATIONS_DIR, type MigrationTarget } from './migrate.js';
export { countStatements, type StatementCounter } from './statement-counter.js';
export { columnOf } from './columns.js';
export { PrismaClient, Prisma, Role, OrderStatus, SignInKind, AccountTokenPurpose } from './generated/prisma/client.js';
export type { User, Post, Comment, Order, RefreshToken, Session, ApiKey, OAuthAccount, AccountToken } from './generated/prisma/client.js';

/** The repository root; relative PGlite directories are resolved against it, as prisma/prisma.config.ts does. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Default embedded data directory (SPEC §0): `./.data/pglite`. */
export const DEFAULT_PGLITE_DIR = path.join(REPO_ROOT, '.data/pglite');

export interface CreateDatabaseOptions {
  /** `postgres://…`: use that server. When absent, the embedded PGlite database is used. */
  databaseUrl?: string;
  /** PGlite data directory (relative to the repository root), or `memory://`. Default `./.data/pglite`. */
  pgliteDir?: string;
  /** Apply pending migrations first. Default: true for PGlite, false for PostgreSQL. */
  migrate?: boolean;
  /** PostgreSQL only: the connection pool's settings (see createPool). */
  pool?: PoolOptions | undefined;
  /** PostgreSQL only: the SQL reader prepares its statements by name (default true; see openPostgresDatabase). */
  preparedStatements?: boolean | undefined;
  /** PostgreSQL only: told once if the server does not keep prepared statements (the reads then go on unnamed). */
  onPreparedStatementsOff?: ((reason: Error) => void) | undefined;
  /** Who hears about idle pool connections dying (PostgreSQL, and the embedded database's thread going away). */
  onPoolError?: ((error: Error) => void) | undefined;
  /** PGlite only: false keeps this process's WebAssembly off V8's optimising compiler (see PGliteThreadOptions). */
  optimiseWebAssembly?: boolean | undefined;
}

/** The options SPEC §0 reads from the environment: DATABASE_URL, else PGLITE_DIR (and PGLITE_WASM_TIER_UP). */
export function databaseOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): CreateDatabaseOptions {
  return env.DATABASE_URL
    ? { databaseUrl: env.DATABASE_URL }
    : { pgliteDir: env.PGLITE_DIR || undefined, optimiseWebAssembly: optimiseWebAssemblyFromEnv(env) };
}

/**
 * Open the database. PGlite: the data directory (created when missing) opened in a worker thread and reached through
 * a one-connection adapter-pg pool (embedded/embedded-database.ts), migrated at start unless `migrate: false`.
 * PostgreSQL: an adapter-pg pool, migrated only with `migrate: true`.
 */
export async function createDatabase(options: CreateDatabaseOptions = {}): Promise<Database> {
  if (options.databaseUrl) {
    const { migrate = false, pool, onPoolError, preparedStatements, onPreparedStatementsOff } = options;
    return openPostgresDatabase(options.databaseUrl, { migrate, pool, onPoolError, preparedStatements, onPreparedStatementsOff });
  }
  // The directory is created when missing by the lock (pglite-thread.ts), which is taken first.
  const dir = options.pgliteDir === 'memory://' ? 'memory://' : path.resolve(REPO_ROOT, options.pgliteDir ?? DEFAULT_PGLITE_DIR);
  const { migrate = true, onPoolError, optimiseWebAssembly } = options;
  return openEmbeddedDatabase(dir, { migrate, onPoolError, optimiseWebAssembly });
}
