// Types of index.js.
export { loadSchemaEngineWasm, openSchemaEngine, schemaEngineVersion, type SchemaEngine } from './load-wasm-engine.js';
export { pgliteMigrationAdapter, pgMigrationAdapter, type MigrationAdapterFactory } from './migration-adapters.js';
export { DirectoryLockedError, directoryOwner, LOCK_FILE, lockDirectory, openOwned, type DirectoryOwner } from './directory-lock.js';
export type { MigrationList } from '@prisma/schema-engine-wasm';
