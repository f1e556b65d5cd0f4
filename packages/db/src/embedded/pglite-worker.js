// @ts-check
// The embedded database's thread: opens PGlite on its data directory and serves it over the PostgreSQL wire protocol
// on a Unix socket in a directory only this user can enter (pglite-thread.ts starts it, creates that directory and
// owns the data directory's lock).
//
// Plain JS so that it runs as a worker under every way the code runs (the bundle, tsx, jest) without a loader.
import { createServer } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PGLITE_EXTENSIONS } from '@users-posts/schema-engine-bridge/pglite-extensions';
import { ExclusiveQueue, serveConnection } from './wire-protocol-bridge.js';

/** @type {{ dataDir: string, socketPath: string, postgresqlConf: string[] }} */
const { dataDir, socketPath, postgresqlConf } = workerData;
const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

/** An error as plain data (a worker can post only that): its class name, message and the fields callers read. */
function serialise(/** @type {any} */ error) {
  const { name, message, stack, code, errno, syscall, path: file } = error ?? {};
  return { name, message: String(message ?? error), stack, code, errno, syscall, path: file };
}

/** @type {PGlite | undefined} */
let pglite;
try {
  pglite = await PGlite.create(dataDir === 'memory://' ? undefined : dataDir, {
    postgresqlconf: postgresqlConf,
    extensions: PGLITE_EXTENSIONS,
  }).catch((error) => {
    // Which database, for the start-up line; a system error's fields (code, path) are kept for its advice.
    const fields = serialise(error);
    throw Object.assign(new Error(), fields, { message: `the embedded database at ${dataDir} cannot be opened: ${fields.message}` });
  });
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
