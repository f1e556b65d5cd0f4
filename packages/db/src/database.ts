// The Database handle: a Prisma client on PGlite (one in-process connection) or on PostgreSQL (adapter-pg pool).
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaClient } from './generated/prisma/client.js';
import { applyMigrations } from './migrate.js';
import { tapAdapterFactory } from './statement-counter.js';

export type DatabaseKind = 'pglite' | 'postgres';

export interface Database {
  prisma: PrismaClient;
  kind: DatabaseKind;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /** Disconnect the client and release the database (closes PGlite; ends the pool). */
  close(): Promise<void>;
}

function makeDatabase(kind: DatabaseKind, adapter: SqlDriverAdapterFactory, release: () => Promise<void>): Database {
  let prisma: PrismaClient | undefined;
  const database: Database = {
    get prisma(): PrismaClient {
      if (!prisma) throw new Error('Database is closed');
      return prisma;
    },
    kind,
    async ping() {
      await database.prisma.$queryRaw`SELECT 1`;
    },
    async close() {
      const client = prisma;
      prisma = undefined;
      if (!client) return;
      await client.$disconnect();
      await release();
    },
  };
  prisma = new PrismaClient({ adapter: tapAdapterFactory(adapter, database) });
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
  return makeDatabase('pglite', new PrismaPGlite(pglite), () => pglite.close());
}

/** A Database on a PostgreSQL server through an adapter-pg pool; `migrate` applies pending migrations first. */
export async function openPostgresDatabase(databaseUrl: string, options: { migrate: boolean }): Promise<Database> {
  if (options.migrate) await applyMigrations({ databaseUrl });
  // The adapter owns its pool and ends it on $disconnect().
  return makeDatabase('postgres', new PrismaPg({ connectionString: databaseUrl }), async () => {});
}

/**
 * PostgreSQL settings for the embedded database. Its buffers live in WebAssembly memory, which the process keeps:
 * Postgres' default 128 MB of shared_buffers cost ~120 MB RSS for the small data sets PGlite serves, while file
 * reads still go through the OS page cache.
 */
export const PGLITE_POSTGRESQL_CONF = ['shared_buffers = 16MB', 'temp_buffers = 4MB', 'work_mem = 4MB'];

/** Open (creating it if needed) a PGlite data directory, or an in-memory database for `memory://`. */
export async function openPGlite(dataDir: string): Promise<PGlite> {
  return PGlite.create(dataDir === 'memory://' ? undefined : dataDir, { postgresqlconf: PGLITE_POSTGRESQL_CONF });
}
