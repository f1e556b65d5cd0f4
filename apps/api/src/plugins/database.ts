// Opens the database (PGlite embedded default, or PostgreSQL), builds the domain services, closes both.
import { createDatabase, type Database } from '@users-posts/db';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
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

async function databasePlugin(app: FastifyInstance, opts: DatabasePluginOptions): Promise<void> {
  const { config } = app;
  const database =
    opts.database ??
    (await createDatabase({
      databaseUrl: config.databaseUrl,
      pgliteDir: config.pgliteDir,
      migrate: config.migrateOnStart || !config.databaseUrl,
      pool: { max: config.databasePoolMax },
      onPoolError: (error) => app.log.warn({ err: error }, 'an idle database connection failed; the pool replaces it'),
    }));
  app.decorate('db', database);
  app.decorate('services', createServices(database.prisma, app.sharedState.events));
  app.addHook('onClose', async () => database.close());
}

export default fp(databasePlugin, { name: 'database', dependencies: ['shared-state'] });
