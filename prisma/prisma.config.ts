// Prisma CLI configuration: schema and migration paths, the datasource URL, and the WASM schema-engine bridge.
// URL: DATABASE_URL when set (postgres://…); otherwise the embedded PGlite data directory as a file: URL
// (PGLITE_DIR, default ./.data/pglite, relative to the repository root), which bin/schema-engine.mjs understands.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { defineConfig } from 'prisma/config';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Must be set before the CLI looks for its schema engine: it then neither downloads nor needs the native binary.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.join(root, 'packages/schema-engine-bridge/bin/schema-engine.mjs');

const pgliteDir = path.resolve(root, process.env.PGLITE_DIR ?? '.data/pglite');

export default defineConfig({
  schema: path.join(root, 'prisma/schema.prisma'),
  migrations: { path: path.join(root, 'prisma/migrations') },
  datasource: { url: process.env.DATABASE_URL || pathToFileURL(pgliteDir).href },
});
