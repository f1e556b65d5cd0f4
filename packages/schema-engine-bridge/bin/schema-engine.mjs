#!/usr/bin/env node
// Stand-in for Prisma's native `schema-engine` executable, backed by the WebAssembly build of the same engine
// (@prisma/schema-engine-wasm). Written by hand because no library provides one. prisma/prisma.config.ts points
// PRISMA_SCHEMA_ENGINE_BINARY here, so the standard CLI (migrate dev/deploy/status/reset, db push, generate) works
// without downloading the native binary from Prisma's binary host.
//
// Protocol, as the prisma 7.10 CLI drives it:
//   schema-engine --version                    → one line naming the engine hash
//   schema-engine --datasource '{"url":…}' cli can-connect-to-database | create-database
//                                              → exit 0; or exit 1 with, on stderr, one ignored line and then JSON
//                                                lines {"level":"ERROR","target":"schema_engine::logger","fields":{…}}
//   schema-engine --datamodels <file>… --datasource '{"url":…}'
//                                              → newline-delimited JSON-RPC 2.0 on stdin/stdout until stdin closes
//
// Datasource URLs: postgres://… or postgresql://… → PostgreSQL through @prisma/adapter-pg;
//                  file:<dir> → a PGlite data directory (relative paths against the working directory);
//                  memory:// → an in-memory PGlite.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { parseIntoClientConfig } from 'pg-connection-string';
import { DirectoryLockedError, openOwned } from '../src/directory-lock.js';
import { keepWebAssemblyOnBaselineCompiler, optimiseWebAssemblyFromEnv } from '../src/webassembly-tier.js';
import { PGLITE_EXTENSIONS } from '../src/pglite-extensions.js';
import { openSchemaEngine, schemaEngineVersion } from '../src/load-wasm-engine.js';
import { pgMigrationAdapter, pgliteMigrationAdapter } from '../src/migration-adapters.js';
import { SHADOW_GAP, createMigrationViaReplay, diffWithMigrationsViaReplay, evaluateDataLossViaReplay } from '../src/shadow-replay.js';

const { values: args, positionals } = parseArgs({
  strict: false,
  allowPositionals: true,
  options: {
    datamodels: { type: 'string', multiple: true },
    datasource: { type: 'string' },
    version: { type: 'boolean', short: 'V' },
  },
});
const url = args.datasource ? JSON.parse(String(args.datasource)).url : undefined;

/** Which database a URL names. @param {string | undefined} url */
function target(url) {
  if (url && /^postgres(ql)?:\/\//.test(url)) return { kind: 'postgres', url };
  if (!url || url.startsWith('memory:')) return { kind: 'pglite', dir: undefined };
  if (url.startsWith('file:')) {
    const dir = url.startsWith('file://') ? fileURLToPath(url.split('?')[0]) : url.slice(5).split('?')[0];
    return { kind: 'pglite', dir: path.resolve(dir) };
  }
  throw Object.assign(new Error(`Unsupported datasource URL (expected postgres://, postgresql://, file: or memory://)`), { code: 'P1013' });
}

/** A PGlite data directory holds PG_VERSION once initialised. @param {string} dir */
const pgliteExists = (dir) => existsSync(path.join(dir, 'PG_VERSION'));

/** The refusal of the data directory's lock, reported instead of the engine's opaque "External error". @type {Error | undefined} */
let lockFailure;

/**
 * PGlite on `dir` (in memory without one), owning the directory like every other opener (src/directory-lock.js): a
 * `prisma migrate` while the server runs is refused with the server's pid instead of corrupting its data.
 * @param {string | undefined} dir
 */
async function openLocked(dir) {
  // As the server: PostgreSQL's WebAssembly stays off V8's optimising compiler unless PGLITE_WASM_TIER_UP=true.
  if (!optimiseWebAssemblyFromEnv(process.env)) keepWebAssemblyOnBaselineCompiler();
  if (!dir) return PGlite.create({ extensions: PGLITE_EXTENSIONS });
  try {
    return await openOwned(dir, () => PGlite.create(dir, { extensions: PGLITE_EXTENSIONS }));
  } catch (error) {
    // The WASM engine passes a failure on only as "External error id#N": keep the lock's refusal to report it.
    if (error instanceof DirectoryLockedError) lockFailure = error;
    throw error;
  }
}

/** `cli can-connect-to-database`: the CLI offers `create-database` when this reports P1003. */
async function canConnect() {
  const db = target(url);
  if (db.kind === 'pglite') {
    if (db.dir && !pgliteExists(db.dir)) {
      throw Object.assign(new Error(`Database \`pglite\` does not exist at \`${db.dir}\``), { code: 'P1003' });
    }
    return;
  }
  const client = new pg.Client(/** @type {pg.ClientConfig} */ (parseIntoClientConfig(db.url)));
  try {
    await client.connect();
  } catch (/** @type {any} */ error) {
    const where = `${client.host}:${client.port}`;
    if (error.code === '3D000')
      ((error.code = 'P1003'), (error.message = `Database \`${client.database}\` does not exist on the database server at \`${where}\`.`));
    else if (/^E(CONNREFUSED|NOTFOUND|TIMEDOUT|HOSTUNREACH)$/.test(error.code))
      ((error.code = 'P1001'), (error.message = `Can't reach database server at \`${where}\``));
    else if (error.code === '28P01') ((error.code = 'P1000'), (error.message = `Authentication failed against database server at \`${where}\``));
    throw error;
  } finally {
    await client.end().catch(() => {});
  }
}

/** `cli create-database` (and the `createDatabase` RPC). */
async function createDatabase() {
  const db = target(url);
  if (db.kind === 'pglite') {
    if (!db.dir || pgliteExists(db.dir)) return { databaseName: 'pglite' };
    await mkdir(db.dir, { recursive: true });
    await (await openLocked(db.dir)).close(); // initialises the directory
    return { databaseName: 'pglite' };
  }
  const config = /** @type {pg.ClientConfig} */ (parseIntoClientConfig(db.url));
  const admin = new pg.Client({ ...config, database: 'postgres' });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${String(config.database).replaceAll('"', '""')}"`);
  } finally {
    await admin.end();
  }
  return { databaseName: config.database };
}

/** Open the engine over the datasource; PGlite is opened lazily, on the engine's first connection. */
async function startEngine() {
  const db = target(url);
  /** @type {PGlite | undefined} */
  let pglite;
  const factory = db.kind === 'postgres' ? pgMigrationAdapter(db.url) : pgliteMigrationAdapter(async () => (pglite ??= await openLocked(db.dir)));
  const files = /** @type {string[]} */ (args.datamodels ?? []);
  // The engine needs at least one schema file, even for commands that only use the URL.
  /** @type {[string, string][]} */
  const datamodels = files.length
    ? files.map((file) => [file, readFileSync(file, 'utf8')])
    : [['schema.prisma', 'datasource db {\n  provider = "postgresql"\n}\n']];
  const engine = await openSchemaEngine({
    adapterFactory: factory,
    datamodels,
    onLog: (line) => process.stderr.write(line.endsWith('\n') ? line : `${line}\n`),
  });
  const close = async () => {
    engine.free();
    await factory.close();
    await pglite?.close();
  };
  return { engine, factory, datamodels, close };
}

/** The native engine's JSON-RPC error object. @param {any} error @param {boolean} isPanic */
function rpcError(error, isPanic) {
  const full = lockFailure?.message ?? String(error?.message ?? error);
  const message = full.split(/\n\s+0: /)[0]; // drop the engine's span trace
  return {
    code: 4466,
    message: 'An error happened. Check the data field for details.',
    data: { is_panic: isPanic, message, meta: { full_error: full }, error_code: error?.code },
  };
}

const send = (/** @type {object} */ msg) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...msg })}\n`);

async function serveJsonRpc() {
  const { engine, factory, datamodels, close } = await startEngine();
  /** Engine methods, with the shadow-database gaps of the WASM engine filled in (see src/shadow-replay.js). */
  const replays = {
    createMigration: createMigrationViaReplay,
    evaluateDataLoss: evaluateDataLossViaReplay,
  };
  /** @param {string} method @param {any} params */
  const call = async (method, params) => {
    if (method === 'getDatabaseVersion') return engine.version(params);
    if (method === 'createDatabase') return createDatabase();
    if (method === 'diff') {
      const replayed = await diffWithMigrationsViaReplay(factory, datamodels, params);
      if (replayed) return replayed;
    }
    try {
      return await /** @type {any} */ (engine)[method](params);
    } catch (error) {
      const replay = /** @type {any} */ (replays)[method];
      if (replay && SHADOW_GAP.test(String(/** @type {any} */ (error)?.message))) return replay(factory, datamodels, params);
      throw error;
    }
  };
  /** @type {any} */
  let current; // the request in flight, answered as a panic if the WASM instance aborts
  let chain = Promise.resolve();
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    chain.then(close).finally(() => process.exit(0));
  };
  process.on('uncaughtException', (error) => {
    const panic = /** @type {any} */ (globalThis).PRISMA_WASM_PANIC_REGISTRY?.message || String(error?.stack ?? error);
    if (current) send({ id: current.id, error: rpcError({ message: panic }, true) });
    process.stderr.write(`${JSON.stringify({ level: 'ERROR', target: 'schema_engine::logger', fields: { message: panic, is_panic: true } })}\n`);
    process.exit(101);
  });
  process.on('SIGTERM', stop).on('SIGINT', stop);

  /** @param {{ id: number, method: string, params?: any }} req */
  const handle = async (req) => {
    current = req;
    try {
      const known = ['getDatabaseVersion', 'createDatabase'].includes(req.method) || typeof (/** @type {any} */ (engine)[req.method]) === 'function';
      if (!known) return send({ id: req.id, error: { code: -32601, message: `Method not found: ${req.method}` } });
      const result = await call(req.method, req.params);
      // The native engine prints `migrate diff` output through a `print` request to the CLI; the WASM one returns it.
      if (req.method === 'diff' && result?.stdout != null)
        send({ id: `print-${req.id}`, method: 'print', params: { content: result.stdout.replace(/\n$/, '') } });
      send({ id: req.id, result: result ?? {} });
    } catch (error) {
      send({ id: req.id, error: rpcError(error, false) });
    } finally {
      current = undefined;
    }
  };
  createInterface({ input: process.stdin, crlfDelay: Infinity })
    .on('line', (line) => {
      if (!line.trim()) return;
      const msg = JSON.parse(line);
      if (msg.method) chain = chain.then(() => handle(msg)); // else: the CLI's answer to our `print`
    })
    .on('close', stop);
}

async function main() {
  if (args.version) {
    process.stdout.write(`schema-engine-cli ${await schemaEngineVersion()} (wasm bridge)\n`);
    return;
  }
  if (positionals[0] === 'cli') {
    const command = { 'can-connect-to-database': canConnect, 'create-database': createDatabase }[String(positionals[1])];
    if (!command) throw new Error(`Unsupported cli command: ${positionals[1]}`);
    try {
      await command();
      process.exit(0);
    } catch (/** @type {any} */ error) {
      const line = { level: 'ERROR', target: 'schema_engine::logger', fields: { error_code: error.code, message: error.message } };
      process.stderr.write(`schema-engine-wasm bridge: ${positionals[1]} failed\n${JSON.stringify(line)}`);
      process.exit(1);
    }
  }
  await serveJsonRpc();
}

main().catch((error) => {
  process.stderr.write(
    `schema-engine-wasm bridge\n${JSON.stringify({ level: 'ERROR', target: 'schema_engine::logger', fields: { error_code: error?.code, message: String(error?.message ?? error) } })}`,
  );
  process.exit(1);
});
