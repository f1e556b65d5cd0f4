// The floor under the product's embedded start and memory: a Node process that only opens PGlite on the product's data
// directory, asks it one query and answers HTTP 200. What the product's embedded figures exceed this by is the app's
// (and its design's); no app with PGlite in its process goes under this.
//
// As cheap as PGlite in a process gets: PGlite on the main thread (no thread of its own, no second V8 isolate, no
// socket), with the product's PostgreSQL settings (POSTGRESQL_CONF, JSON, from packages/db/src/embedded/pglite-thread.ts)
// and its default of V8's baseline compiler for the WebAssembly. Plain JS on purpose: no loader, nothing else loaded.
// Run by bench/scenarios/startup.ts: DATA_DIR=<a product's data dir> PORT=… POSTGRESQL_CONF='[…]' node this file.
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { keepWebAssemblyOnBaselineCompiler } from '../../packages/schema-engine-bridge/src/webassembly-tier.js';

const { DATA_DIR, PORT, POSTGRESQL_CONF } = process.env;
if (!DATA_DIR || !PORT || !POSTGRESQL_CONF) throw new Error('DATA_DIR, PORT and POSTGRESQL_CONF are required');

keepWebAssemblyOnBaselineCompiler();
// The product's copy of PGlite (a dependency of packages/db, not of the bench).
const pglitePath = createRequire(path.resolve(import.meta.dirname, '../../packages/db/package.json')).resolve('@electric-sql/pglite');
const { PGlite } = await import(pathToFileURL(pglitePath).href);
const pglite = await PGlite.create(path.join(DATA_DIR, 'pglite'), { postgresqlconf: JSON.parse(POSTGRESQL_CONF) });
await pglite.query('SELECT 1');
const server = http.createServer((_request, response) => response.writeHead(200).end('ok')).listen(Number(PORT), '127.0.0.1');

process.once('SIGTERM', async () => {
  server.close();
  await pglite.close(); // flushes its files: the data directory stays the product's
  process.exit(0);
});
