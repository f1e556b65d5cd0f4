// The bridge's surface for in-process use (packages/db): the WASM engine, the adapters it migrates through, and the
// ownership lock of a PGlite directory. bin/schema-engine.mjs is the CLI's stand-in for the native executable.
export { loadSchemaEngineWasm, openSchemaEngine, schemaEngineVersion } from './load-wasm-engine.js';
export { pgliteMigrationAdapter, pgMigrationAdapter } from './migration-adapters.js';
export { DirectoryLockedError, directoryOwner, LOCK_FILE, lockDirectory, openOwned } from './directory-lock.js';
