// @ts-check
// The embedded database's thread: opens PGlite on its data directory and serves it over the PostgreSQL wire protocol
// on a Unix socket in a directory only this user can enter (pglite-thread.ts starts it, creates that directory and
// owns the data directory's lock).
//
// Plain JS so that it runs as a worker under every way the code runs (the bundle, tsx, jest) without a loader, and as
// a process of its own: `node pglite-worker.js --initialise <dir>` (a new directory's initialisation, below).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, cp } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PGLITE_EXTENSIONS } from '@users-posts/schema-engine-bridge/pglite-extensions';
import { ExclusiveQueue, serveConnection } from './wire-protocol-bridge.js';

/**
 * The production build's migrated data directory (scripts/build.mjs writes it beside this file, bundled): a new data
 * directory starts as a copy of it, without initdb (the process below) and without any migration left to apply.
 * Absent when running from the sources.
 */
const INITIAL_DATA_DIRECTORY = fileURLToPath(new URL('./pglite-initial', import.meta.url));

/** An error as plain data (a worker can post only that): its class name, message and the fields callers read. */
function serialise(/** @type {any} */ error) {
  const { name, message, stack, code, errno, syscall, path: file } = error ?? {};
  return { name, message: String(message ?? error), stack, code, errno, syscall, path: file };
}

/**
 * A new data directory is initialised (PostgreSQL's initdb, inside PGlite) by a process of its own that then ends, and
 * only then opened by the thread. initdb grows PGlite's WebAssembly memory by ~400 MB, and a process keeps what it
 * has grown: done in the thread, the first start's server kept 670 MB for good against 230 MB on every later start
 * (and ~400 MB when done in a second thread that then ended: the pages its allocator took stayed with the process).
 * Costs the first start ~1 s (a Node process, and PGlite's module compiled twice): only when there is no build's data
 * directory to copy (INITIAL_DATA_DIRECTORY).
 */
async function initialiseInOwnProcess(/** @type {string} */ dataDir) {
  const self = fileURLToPath(import.meta.url);
  // Its stdin is a pipe it watches: a parent killed mid-initialisation takes the child with it, so no initdb outlives
  // the directory's lock. No NODE_OPTIONS: an --inspect port or a preload of the parent's is not the child's.
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, [self, '--initialise', dataDir], { stdio: ['pipe', 'ignore', 'pipe'], env });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  const code = await new Promise((resolve, reject) => child.once('error', reject).once('close', resolve));
  if (code !== 0) throw new Error(`initialising it failed (exit code ${code}): ${stderr.trim().split('\n').slice(-3).join(' ')}`);
}

/**
 * The build's data directory copied into `dataDir`, PG_VERSION last: a start stopped midway (killed, the disk full)
 * leaves a directory without it, which the next start copies again instead of opening half a database.
 */
async function copyInitialDataDirectory(/** @type {string} */ dataDir) {
  const marker = path.join(INITIAL_DATA_DIRECTORY, 'PG_VERSION');
  await cp(INITIAL_DATA_DIRECTORY, dataDir, { recursive: true, force: true, filter: (source) => source !== marker });
  await copyFile(marker, path.join(dataDir, 'PG_VERSION'));
}

/** The process's whole work: initdb in `dir`, then exit. */
async function initialise(/** @type {string | undefined} */ dir) {
  if (!dir) throw new Error('usage: node pglite-worker.js --initialise <data directory>');
  // The parent's end of the pipe closes when it exits, killed or not: stop then, whatever initdb has reached.
  process.stdin.on('end', () => process.exit(1)).resume();
  await (await PGlite.create(dir)).close();
}

/** The thread's work: open PGlite (initialised apart first when new) and serve it on the socket until asked to close. */
async function serve(/** @type {{ dataDir: string, socketPath: string, postgresqlConf: string[] }} */ { dataDir, socketPath, postgresqlConf }) {
  const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
  /** @type {PGlite | undefined} */
  let pglite;
  try {
    try {
      if (dataDir !== 'memory://' && !existsSync(path.join(dataDir, 'PG_VERSION'))) {
        // A copy of the build's migrated data directory when there is one (files only: no PGlite, no initdb, no
        // migration left to apply), else initdb in a process of its own.
        if (existsSync(path.join(INITIAL_DATA_DIRECTORY, 'PG_VERSION'))) await copyInitialDataDirectory(dataDir);
        else await initialiseInOwnProcess(dataDir);
      }
      pglite = await PGlite.create(dataDir === 'memory://' ? undefined : dataDir, { postgresqlconf: postgresqlConf, extensions: PGLITE_EXTENSIONS });
    } catch (error) {
      // Which database, for the start-up line; a system error's fields (code, path) are kept for its advice.
      const fields = serialise(error);
      throw Object.assign(new Error(), fields, { message: `the embedded database at ${dataDir} cannot be opened: ${fields.message}` });
    }
    const queue = new ExclusiveQueue(pglite);
    /** @type {Set<import('node:net').Socket>} */
    const connections = new Set();
    const server = createServer((socket) => {
      connections.add(socket.once('close', () => connections.delete(socket)));
      serveConnection(socket, queue);
    });
    await new Promise((resolve, reject) => {
      // Said as what it is: a `listen` error would otherwise read as the HTTP port's ("port in use: set PORT").
      const failed = (/** @type {NodeJS.ErrnoException} */ error) =>
        reject(Object.assign(new Error(`the embedded database cannot listen on its socket ${socketPath}: ${error.message}`), { code: error.code }));
      server.once('error', failed).listen(socketPath, () => resolve(undefined));
    });

    port.on('message', async (message) => {
      if (message !== 'close') return;
      server.close();
      for (const socket of connections) socket.destroy();
      await pglite?.close().catch(() => undefined);
      port.postMessage({ type: 'closed' });
      port.close();
    });
    port.postMessage({ type: 'ready' });
  } catch (error) {
    await pglite?.close().catch(() => undefined);
    port.postMessage({ type: 'failed', error: serialise(error) });
    port.close();
  }
}

const initialiseFlag = process.argv.indexOf('--initialise');
if (parentPort) await serve(workerData);
else {
  await initialise(initialiseFlag > 0 ? process.argv[initialiseFlag + 1] : undefined);
  process.exit(0); // the watched stdin would keep it alive
}
