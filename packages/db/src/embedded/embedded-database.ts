// The embedded PGlite database, in its own thread, reached like a PostgreSQL server: adapter-pg over a one-connection pool.
import { PrismaPg } from '@prisma/adapter-pg';
import { createPool, makeDatabase, type Database } from '../database.js';
import { applyMigrations, readMigrations } from '../migrate.js';
import { startPGliteThread, type PGliteThread, type PGliteThreadOptions } from './pglite-thread.js';

/** A database whose thread is starting: usable once `ready` resolves (it rejects, with everything released, if it cannot start). */
export interface StartingDatabase {
  database: Database;
  ready: Promise<void>;
  /** The thread that runs PGlite (to hear of its crash: `thread.onUnexpectedExit`). */
  thread: PGliteThread;
  /** Resolves once the first ANALYZE after `ready` has run (see STATISTICS_INTERVAL_MS); never rejects. */
  statistics: Promise<void>;
}

/**
 * How often the embedded database's planner statistics are renewed (ANALYZE), besides once as it opens. PGlite has no
 * autovacuum: without this a database nobody analyses keeps none, the planner guesses 0.5 % of the rows for any
 * value, and the listings at scale (collections/page.ts, search-probe.ts) lose what they choose by: a selective
 * search or filter, the rare trigrams of a term. ANALYZE samples at most 30 000 rows a table (~0.3 s at 100 000 users),
 * so the one connection is held for that long every interval.
 */
const STATISTICS_INTERVAL_MS = 10 * 60_000;

export interface EmbeddedDatabaseOptions extends PGliteThreadOptions {
  migrate: boolean;
  /** Who hears about the pool's connection failing while idle (the thread stopped under it). */
  onPoolError?: ((error: Error) => void) | undefined;
}

/**
 * A Database on the PGlite data directory `dir` (or `memory://`), or on a thread already started for it, returned at
 * once: it is to be used once `ready` has resolved (the thread has opened PGlite and, with `migrate`, the migrations
 * are applied through the schema engine, over the socket like PostgreSQL's).
 *
 * Why the wire protocol: the app then uses the PostgreSQL code path (adapter-pg, the SQL reader's pool, error
 * mapping, migrations), the one the PostgreSQL suites prove, instead of a second adapter. The pool has one
 * connection: PGlite has one backend, and one connection keeps a transaction to itself (others wait for the pool).
 */
export function startEmbeddedDatabase(dirOrThread: string | PGliteThread, options: EmbeddedDatabaseOptions): StartingDatabase {
  const thread = typeof dirOrThread === 'string' ? startPGliteThread(dirOrThread, options) : dirOrThread;
  // Never idle-closed: a new connection would only cost a startup round.
  const pool = createPool(thread.url, { max: 1, idleTimeoutMillis: 0 }, options.onPoolError);
  // The migration files are read while the thread opens PGlite.
  const migrations = options.migrate ? readMigrations() : undefined;
  migrations?.catch(() => undefined); // awaited below; a failure to read them fails `ready`
  const ready = (async () => {
    try {
      await thread.listening;
      if (migrations) await applyMigrations({ databaseUrl: thread.url, pool }, { migrations });
    } catch (error) {
      await pool.end().catch(() => undefined);
      await thread.stop();
      throw error;
    }
  })();
  ready.catch(() => undefined); // not unhandled while nobody awaits it yet; whoever awaits it still gets the error
  // A failed ANALYZE (the thread stopping under it) waits for the next turn: statistics only guide the planner.
  const analyse = () =>
    pool.query('ANALYZE').then(
      () => undefined,
      () => undefined,
    );
  let renewing: NodeJS.Timeout | undefined;
  const statistics = ready.then(
    () => {
      renewing = setInterval(() => void analyse(), STATISTICS_INTERVAL_MS).unref();
      return analyse();
    },
    () => undefined,
  );
  const database = makeDatabase(
    'pglite',
    new PrismaPg(pool),
    async () => {
      await ready.catch(() => undefined);
      clearInterval(renewing);
      await statistics;
      await pool.end().catch(() => undefined);
      await thread.stop();
    },
    pool,
  );
  return { database, ready, thread, statistics };
}

/** startEmbeddedDatabase, once ready. */
export async function openEmbeddedDatabase(dir: string, options: EmbeddedDatabaseOptions): Promise<Database> {
  const starting = startEmbeddedDatabase(dir, options);
  await starting.ready;
  return starting.database;
}
