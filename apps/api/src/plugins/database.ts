// Opens the database (PGlite embedded default, or PostgreSQL), builds the domain services, closes both.
import { createDatabase, isDatabaseUnavailableError, type Database } from '@users-posts/db';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { DatabaseUnreachableError } from '../startup-failure.js';
import { createServices, type Services } from '../services/index.js';

declare module 'fastify' {
  interface FastifyInstance {
    db: Database;
    services: Services;
  }
}

export interface DatabasePluginOptions {
  /** An already-open database (tests); otherwise one is opened from the config. */
  database?: Database | undefined;
}

/**
 * Opens the database the config names. On PostgreSQL a server that does not answer at start fails the start (main.ts
 * prints one line naming host:port) instead of serving 503s from a process that never worked; once started, an outage
 * is answered with 503s and recovered from (README, "When PostgreSQL goes away").
 */
async function openConfiguredDatabase(app: FastifyInstance): Promise<Database> {
  const { config } = app;
  try {
    const database = await createDatabase({
      databaseUrl: config.databaseUrl,
      pgliteDir: config.pgliteDir,
      migrate: config.migrateOnStart || !config.databaseUrl,
      pool: { max: config.databasePoolMax },
      onPoolError: (error) => app.log.warn({ err: error }, 'an idle database connection failed; the pool replaces it'),
    });
    if (config.databaseUrl) {
      try {
        await database.ping();
      } catch (error) {
        await database.close().catch(() => undefined);
        throw new DatabaseUnreachableError(config.databaseUrl, error);
      }
    }
    return database;
  } catch (error) {
    if (config.databaseUrl && !(error instanceof DatabaseUnreachableError) && isDatabaseUnavailableError(error))
      throw new DatabaseUnreachableError(config.databaseUrl, error);
    throw error;
  }
}

async function databasePlugin(app: FastifyInstance, opts: DatabasePluginOptions): Promise<void> {
  const database = opts.database ?? (await openConfiguredDatabase(app));
  app.decorate('db', database);
  app.decorate('services', createServices(database, app.sharedState.events));
  app.addHook('onClose', async () => database.close());
}

export default fp(databasePlugin, { name: 'database', dependencies: ['shared-state'] });
