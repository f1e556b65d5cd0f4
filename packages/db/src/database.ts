// The Database handle: a Prisma client on PostgreSQL or the embedded PGlite (adapter-pg pool), or on an in-process PGlite (tests).
import type { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import { PrismaClient } from './generated/prisma/client.js';
import { applyMigrations } from './migrate.js';
import { createPoolSqlReader, createSqlReader, StatementNames, type SqlReader } from './sql-reader.js';
import { statementEmitter, tapAdapterFactory } from './statement-counter.js';

export type DatabaseKind = 'pglite' | 'postgres';

/** The PostgreSQL connection pool right now: connections open (busy + idle), idle ones, requests queued for one, the cap. */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

export interface Database {
  prisma: PrismaClient;
  /** Hot read-only statements through the same driver adapter, without the client's query interpreter (sql-reader.ts). */
  sql: SqlReader;
  kind: DatabaseKind;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /** The connection pool's figures (PostgreSQL, and the embedded database's pool of one); undefined for an in-process PGlite. */
  poolStats(): PoolStats | undefined;
  /** Disconnect the client and release the database (closes PGlite; ends the pool). */
  close(): Promise<void>;
}

/**
 * A Database over a driver adapter; with `pool` (adapter-pg's), the SQL reader and the pool figures use it directly, and
 * with `names` the reader prepares the reads that opt in by name (sql-reader.ts StatementNames, ReadOptions).
 */
export function makeDatabase(
  kind: DatabaseKind,
  adapter: SqlDriverAdapterFactory,
  release: () => Promise<void>,
  pool?: pg.Pool,
  names?: StatementNames,
): Database {
  const poolStats = (): PoolStats | undefined =>
    pool && { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max };
  let prisma: PrismaClient | undefined;
  let sql: SqlReader | undefined;
  const database: Database = {
    get prisma(): PrismaClient {
      if (!prisma) throw new Error('Database is closed');
      return prisma;
    },
    get sql(): SqlReader {
      if (!sql) throw new Error('Database is closed');
      return sql;
    },
    kind,
    // Through the SQL reader: the same adapter and connection, without starting the Prisma client's query engine (its
    // WebAssembly compiler: ~0.2 s and tens of MB at start), which then loads on the first query that needs it.
    async ping() {
      await database.sql.rows('SELECT 1');
    },
    poolStats,
    async close() {
      const client = prisma;
      const reader = sql;
      prisma = undefined;
      sql = undefined;
      if (!client) return;
      await reader?.dispose();
      await client.$disconnect();
      await release();
    },
  };
  const tapped = tapAdapterFactory(adapter, database);
  prisma = new PrismaClient({ adapter: tapped });
  sql = pool ? createPoolSqlReader(pool, statementEmitter(database), names) : createSqlReader(tapped);
  return database;
}

/**
 * A Database over an open PGlite instance, which it then owns (close() closes it). With `migrate`, pending
 * migrations are applied first on that same instance (a PGlite directory can be opened by one process at a time).
 */
export async function openPGliteDatabase(pglite: PGlite, options: { migrate: boolean }): Promise<Database> {
  try {
    if (options.migrate) await applyMigrations({ pglite });
  } catch (error) {
    await pglite.close();
    throw error;
  }
  // Loaded here: only test databases (testing.ts) run PGlite on this thread; the product's is embedded-database.ts.
  const { PrismaPGlite } = await import('pglite-prisma-adapter');
  return makeDatabase('pglite', new PrismaPGlite(pglite), () => pglite.close());
}

const TIMESTAMP_OID = 1114;
const DATE_OID = 1082;
/**
 * The pool's own type parsers (statements sent on it directly, as the SQL reader's; adapter-pg passes its own with
 * each query): pg's defaults, except `timestamp without time zone` (Prisma's DateTime) and `date` (`@db.Date`), read
 * as UTC as Prisma writes and reads them (pg's defaults read them in the process's local time zone). Not covered, as no
 * column of the schema has them: arrays of timestamps, and json (pg gives objects where adapter-pg gives text).
 */
export const parseUtcTimestamp = (text: string): Date => {
  // Every row's timestamps come through here (a page of users: 60), so the usual shape, `YYYY-MM-DD HH:MM:SS[.f…]`,
  // is read by its digits (Date.UTC: a third of the time of an ISO string built and parsed); anything else (BC, a
  // five-digit year, infinity) is read as ISO text, as before. Both keep milliseconds, as a Date does.
  if (text.length >= 19 && text.length <= 26 && text.charCodeAt(4) === 45 && text.charCodeAt(10) === 32 && text.charCodeAt(13) === 58) {
    const millis = text.length > 20 ? digits(text.length >= 23 ? text : text.padEnd(23, '0'), 20, 23) : 0;
    const year = digits(text, 0, 4); // (Date.UTC reads years 0–99 as 1900–1999: those go the ISO way)
    const time = Date.UTC(
      year >= 100 ? year : NaN,
      digits(text, 5, 7) - 1,
      digits(text, 8, 10),
      digits(text, 11, 13),
      digits(text, 14, 16),
      digits(text, 17, 19),
      millis,
    );
    if (!Number.isNaN(time)) return new Date(time);
  }
  return new Date(`${text.replace(' ', 'T')}Z`);
};
/** The number written by the decimal digits `text[from, to)`, NaN when one is not a digit. */
function digits(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return NaN;
    value = value * 10 + digit;
  }
  return value;
}
const parseUtcDate = (text: string): Date => new Date(`${text}T00:00:00Z`);
const PRISMA_TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    format === 'binary'
      ? pg.types.getTypeParser(oid, format)
      : oid === TIMESTAMP_OID
        ? parseUtcTimestamp
        : oid === DATE_OID
          ? parseUtcDate
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** Connection pool settings for PostgreSQL (SPEC: a database that goes away gives 503s, never a hang). */
export interface PoolOptions {
  /** Most connections open at once (`DATABASE_POOL_MAX`); default 10, pg's own default. */
  max?: number | undefined;
  /** How long a request waits for a connection (new, or a free one of a full pool) before it fails; default 5 s. */
  connectionTimeoutMillis?: number | undefined;
  /** How long a connection may sit idle before it is closed; default 30 s. */
  idleTimeoutMillis?: number | undefined;
  /**
   * How long a statement may go without an answer before the client gives up on it (and the pool drops that
   * connection); default 10 s. Bounds a server that keeps connections open but no longer answers (frozen, partitioned).
   */
  queryTimeoutMillis?: number | undefined;
}

export const DEFAULT_POOL_OPTIONS = { max: 10, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000, queryTimeoutMillis: 10_000 } as const;

/**
 * The pg pool behind adapter-pg, built here so that every way of waiting on a database that has gone away is bounded:
 * a connection attempt (or a wait for a free connection) fails after `connectionTimeoutMillis`, a statement without
 * an answer after `queryTimeoutMillis`, TCP keep-alive notices
 * a peer that vanished without closing, and idle connections the server drops (restart, `pg_terminate_backend`) are
 * reported to `onError` instead of crashing the process as an unhandled `error` event would. A failed query or
 * connection is discarded by the pool, so the next request opens a fresh one: recovery needs no restart.
 */
export function createPool(connectionString: string, options: PoolOptions = {}, onError: (error: Error) => void = () => {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    types: PRISMA_TYPES,
    max: options.max ?? DEFAULT_POOL_OPTIONS.max,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? DEFAULT_POOL_OPTIONS.connectionTimeoutMillis,
    idleTimeoutMillis: options.idleTimeoutMillis ?? DEFAULT_POOL_OPTIONS.idleTimeoutMillis,
    query_timeout: options.queryTimeoutMillis ?? DEFAULT_POOL_OPTIONS.queryTimeoutMillis,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  pool.on('error', onError);
  return pool;
}

/**
 * A Database on a PostgreSQL server through an adapter-pg pool (see createPool); `migrate` applies pending migrations
 * first. Its SQL reader prepares the reads that opt in by name, unless `preparedStatements` is false (a PgBouncer in
 * transaction mode before 1.21, or without `max_prepared_statements`, cannot keep them).
 */
export async function openPostgresDatabase(
  databaseUrl: string,
  options: {
    migrate: boolean;
    pool?: PoolOptions | undefined;
    onPoolError?: ((error: Error) => void) | undefined;
    preparedStatements?: boolean | undefined;
    /** Told once if the server turns out not to keep prepared statements (a pooler): the reads then go on unnamed. */
    onPreparedStatementsOff?: ((reason: Error) => void) | undefined;
  },
): Promise<Database> {
  if (options.migrate) await applyMigrations({ databaseUrl });
  const pool = createPool(databaseUrl, options.pool, options.onPoolError);
  // The pool is ours: the adapter leaves an external pool open on $disconnect(), and close() ends it after.
  const names = options.preparedStatements === false ? undefined : new StatementNames(undefined, options.onPreparedStatementsOff);
  return makeDatabase('postgres', new PrismaPg(pool), () => pool.end(), pool, names);
}
