// Opens the database (PGlite embedded default, in its own thread, or PostgreSQL) and closes it (the domain on it: plugins/domain.ts).
import { createDatabase, isDatabaseUnavailableError, startEmbeddedDatabase, type Database, type PGliteThread } from '@users-posts/db';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { DatabaseUnreachableError } from '../startup-failure.js';

declare module 'fastify' {
  interface FastifyInstance {
    db: Database;
  }
}

export interface DatabasePluginOptions {
  /** An already-open database (tests); otherwise one is opened from the config. */
  database?: Database | undefined;
  /** The embedded database's thread, when main.ts started it before loading the app. */
  pgliteThread?: PGliteThread | undefined;
}

/**
 * Opens the PostgreSQL server the config names. A server that does not answer at start fails the start (main.ts
 * prints one line naming host:port) instead of serving 503s from a process that never worked; once started, an outage
 * is answered with 503s and recovered from (README, "When PostgreSQL goes away").
 */
async function openPostgres(app: FastifyInstance, databaseUrl: string): Promise<Database> {
  const { config } = app;
  try {
    const database = await createDatabase({
      databaseUrl,
      migrate: config.migrateOnStart,
      pool: { max: config.databasePoolMax },
      preparedStatements: config.databasePreparedStatements,
      onPreparedStatementsOff: (error) =>
        app.log.warn(
          { err: error },
          'the database server lost a prepared statement (a pooler in transaction mode?): reads go on unprepared; set DATABASE_PREPARED_STATEMENTS=false',
        ),
      onPoolError: (error) => app.log.warn({ err: error }, 'an idle database connection failed; the pool replaces it'),
    });
    try {
      await database.ping();
    } catch (error) {
      await database.close().catch(() => undefined);
      throw new DatabaseUnreachableError(databaseUrl, error);
    }
    return database;
  } catch (error) {
    if (!(error instanceof DatabaseUnreachableError) && isDatabaseUnavailableError(error)) throw new DatabaseUnreachableError(databaseUrl, error);
    throw error;
  }
}

/**
 * The embedded database (without DATABASE_URL) opens in its own thread (embedded-database.ts) while the app goes on
 * registering its plugins; main.ts starts that thread even before it loads the app. Nothing queries the database
 * before the server is ready: `onReady` (run by listen) waits for the thread and the migrations, so a failure to open
 * it still fails the start.
 */
function embeddedDatabase(app: FastifyInstance, thread: PGliteThread | undefined): Database {
  const starting = startEmbeddedDatabase(thread ?? app.config.pgliteDir, {
    migrate: true,
    optimiseWebAssembly: app.config.pgliteWasmTierUp,
    onPoolError: (error) => app.log.warn({ err: error }, "the embedded database's connection failed"),
  });
  // PGlite crashed (its thread ended): nothing can be answered any more, and only a new process opens the directory
  // again. The server stops with exit code 1, for a supervisor to restart it, rather than answer 503 for ever.
  starting.thread.onUnexpectedExit((error) => {
    app.log.fatal({ err: error }, 'the embedded database stopped: the server stops');
    process.exitCode = 1;
    void app.close();
  });
  app.addHook('onReady', () => starting.ready);
  return starting.database;
}

async function databasePlugin(app: FastifyInstance, opts: DatabasePluginOptions): Promise<void> {
  const { databaseUrl } = app.config;
  const database = opts.database ?? (databaseUrl ? await openPostgres(app, databaseUrl) : embeddedDatabase(app, opts.pgliteThread));
  app.decorate('db', database);
  app.addHook('onClose', async () => database.close());
}

export default fp(databasePlugin, { name: 'database', dependencies: ['shared-state'] });
