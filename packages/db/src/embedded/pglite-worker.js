// @ts-check
// The embedded database's thread: opens PGlite on its data directory and serves it over the PostgreSQL wire protocol
// on a Unix socket in a directory only this user can enter (embedded-database.ts starts it, creates that directory and
// owns the data directory's lock).
//
// Plain JS so that it runs as a worker under every way the code runs (the bundle, tsx, jest) without a loader.
import { createServer } from 'node:net';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { ExclusiveQueue, serveConnection } from './wire-protocol-bridge.js';

/** @type {{ dataDir: string, socketDir: string, postgresqlConf: string[] }} */
const { dataDir, socketDir, postgresqlConf } = workerData;
const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

/** An error as plain data (a worker can post only that): its class name, message and the fields callers read. */
function serialise(/** @type {any} */ error) {
  const { name, message, stack, code, errno, syscall, path: file } = error ?? {};
  return { name, message: String(message ?? error), stack, code, errno, syscall, path: file };
}

/** @type {PGlite | undefined} */
let pglite;
try {
  pglite = await PGlite.create(dataDir === 'memory://' ? undefined : dataDir, { postgresqlconf: postgresqlConf });
  const queue = new ExclusiveQueue(pglite);
  /** @type {Set<import('node:net').Socket>} */
  const connections = new Set();
  const server = createServer((socket) => {
    connections.add(socket.once('close', () => connections.delete(socket)));
    serveConnection(socket, queue);
  });
  const socketPath = path.join(socketDir, '.s.PGSQL.5432'); // where libpq-style clients look for port 5432
  await new Promise((resolve, reject) => server.once('error', reject).listen(socketPath, () => resolve(undefined)));

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
