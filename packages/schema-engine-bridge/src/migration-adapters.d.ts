// Types of migration-adapters.js (plain JS so the bridge executable can run it without TypeScript).
import type { PGlite } from '@electric-sql/pglite';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';

export interface MigrationAdapterFactory extends SqlMigrationAwareDriverAdapterFactory {
  /** Dispose every connection the factory handed out (the engine never disposes its main one). */
  close(): Promise<void>;
}
export function pgMigrationAdapter(url: string): MigrationAdapterFactory;
export function pgliteMigrationAdapter(db: PGlite | (() => Promise<PGlite>)): MigrationAdapterFactory;
