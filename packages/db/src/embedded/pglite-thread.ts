// Starts the thread that runs the embedded PGlite (pglite-worker.js) and stops it; light, so main.ts starts it first.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { lockDirectory } from '@users-posts/schema-engine-bridge/directory-lock';

/**
 * PostgreSQL settings for the embedded database (and test databases). Its buffers live in WebAssembly memory, which
 * the process keeps: Postgres' default 128 MB of shared_buffers cost ~120 MB RSS for the small data sets PGlite
 * serves, while file reads still go through the OS page cache.
 */
export const PGLITE_POSTGRESQL_CONF = ['shared_buffers = 16MB', 'temp_buffers = 4MB', 'work_mem = 4MB'];

/** A PGlite data directory being opened in its own thread, served over the PostgreSQL wire protocol at `url`. */
export interface PGliteThread {
  /** The data directory, or `memory://`. */
  dir: string;
  /** A PostgreSQL URL for the thread's Unix socket (pg, adapter-pg and the schema engine connect to it as to a server). */
  url: string;
  /** Resolves once PGlite is open and the socket listens; rejects (with the thread stopped) if it cannot open. */
  listening: Promise<void>;
  /** Closes PGlite (it flushes its files), ends the thread, releases the directory. Idempotent. */
  stop(): Promise<void>;
}

type WorkerMessage = { type: 'ready' } | { type: 'failed'; error: SerialisedError } | { type: 'closed' };
type SerialisedError = { name?: string; message: string; stack?: string; code?: unknown; errno?: unknown; syscall?: unknown; path?: unknown };

/** The worker's error as an Error of this thread, with the fields start-up messages read (code, syscall, path). */
function revive(serialised: SerialisedError): Error {
  const error = Object.assign(new Error(serialised.message), serialised);
  if (serialised.stack) error.stack = serialised.stack;
  return error;
}

/** The next message of `worker`, or its failure: an error it threw, or its exit before saying anything. */
function nextMessage(worker: Worker): Promise<WorkerMessage> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: WorkerMessage) => (settle(), resolve(message));
    const onError = (error: Error) => (settle(), reject(error));
    const onExit = (code: number) => (settle(), reject(new Error(`the embedded database's thread stopped (exit code ${code})`)));
    const settle = () => worker.off('message', onMessage).off('error', onError).off('exit', onExit);
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  });
}

/**
 * Takes the lock of `dir` (DirectoryLockedError at once if another process, or this one, has it open), then starts the
 * thread that opens PGlite on it. Returns at once.
 *
 * Why a thread: opening PGlite (compiling PostgreSQL's WebAssembly and starting it) takes ~0.6 s of CPU, which then
 * runs beside the app's own start instead of before it, and every statement runs off the thread that serves HTTP.
 */
export function startPGliteThread(dir: string): PGliteThread {
  const release = dir === 'memory://' ? () => undefined : lockDirectory(dir);
  // Created here, 0700 (no other local user can reach the socket, and PGlite asks for no password), so that the
  // socket's address is known before the thread listens on it.
  let socketDir: string;
  try {
    socketDir = mkdtempSync(path.join(os.tmpdir(), 'users-posts-pglite-'));
  } catch (error) {
    release();
    throw error;
  }
  const removeSocketDir = () => rmSync(socketDir, { recursive: true, force: true });
  process.once('exit', removeSocketDir);
  const worker = new Worker(new URL('./pglite-worker.js', import.meta.url), {
    workerData: { dataDir: dir, socketDir, postgresqlConf: PGLITE_POSTGRESQL_CONF },
    // Not the process's flags: a loader (`--import tsx` under pnpm dev or the seed) would load again for nothing,
    // and `--input-type` or `-e` make no sense for a file.
    execArgv: [],
  });

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      const closed = nextMessage(worker).catch(() => undefined);
      worker.postMessage('close');
      await closed;
      await worker.terminate();
      release();
      removeSocketDir();
      process.off('exit', removeSocketDir);
    })());
  const listening = nextMessage(worker).then(
    async (first) => {
      if (first.type === 'ready') return;
      await stop();
      throw first.type === 'failed' ? revive(first.error) : new Error('the embedded database did not start');
    },
    async (error: unknown) => {
      await stop();
      throw error;
    },
  );
  listening.catch(() => undefined); // not unhandled while nobody awaits it yet; whoever awaits it still gets the error
  return { dir, url: `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(socketDir)}`, listening, stop };
}
