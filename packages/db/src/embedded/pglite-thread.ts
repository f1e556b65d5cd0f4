// Starts the thread that runs the embedded PGlite (pglite-worker.js) and stops it; light, so main.ts starts it first.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { lockDirectory } from '@users-posts/schema-engine-bridge/directory-lock';
import { keepWebAssemblyOnBaselineCompiler } from '@users-posts/schema-engine-bridge/webassembly-tier';

export { optimiseWebAssemblyFromEnv } from '@users-posts/schema-engine-bridge/webassembly-tier';

/**
 * PostgreSQL settings for the embedded database (and test databases). Its buffers live in WebAssembly memory, which
 * the process keeps: Postgres' default 128 MB of shared_buffers cost ~120 MB RSS for the small data sets PGlite
 * serves, while file reads still go through the OS page cache.
 */
export const PGLITE_POSTGRESQL_CONF = ['shared_buffers = 16MB', 'temp_buffers = 4MB', 'work_mem = 4MB'];

/** A PGlite data directory being opened in its own thread, served over the PostgreSQL wire protocol at `url`. */
export interface PGliteThread {
  /** A PostgreSQL URL for the thread's Unix socket (pg, adapter-pg and the schema engine connect to it as to a server). */
  url: string;
  /** Resolves once PGlite is open and the socket listens; rejects (with the thread stopped) if it cannot open. */
  listening: Promise<void>;
  /** Closes PGlite (it flushes its files), ends the thread, releases the directory. Idempotent. */
  stop(): Promise<void>;
  /** Who hears that the thread ended on its own after it was listening (PGlite crashed): its error, if it threw one. */
  onUnexpectedExit(listener: (error: Error) => void): void;
}

export interface PGliteThreadOptions {
  /**
   * false: no WebAssembly of this process is optimised from now on, a choice for the whole process (V8's flags are per
   * process; schema-engine-bridge/src/webassembly-tier.js: PGlite's memory peak on Node 24). Unset or true: V8's default.
   */
  optimiseWebAssembly?: boolean | undefined;
}

type WorkerMessage = { type: 'ready' } | { type: 'failed'; error: SerialisedError } | { type: 'closed' };
type SerialisedError = { name?: string; message: string; stack?: string; code?: unknown; errno?: unknown; syscall?: unknown; path?: unknown };

/** The worker's error as an Error of this thread, with the fields start-up messages read (code, syscall, path). */
function revive({ stack, ...fields }: SerialisedError): Error {
  const error = Object.assign(new Error(fields.message), fields);
  if (stack) error.stack = stack;
  return error;
}

/** Socket directories of threads not yet stopped, removed if the process exits first. */
const socketDirs = new Set<string>();
process.once('exit', () => socketDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** Longest Unix socket path that every platform takes whole (Linux 107 bytes, macOS 103); Node truncates longer ones silently. */
const MAX_SOCKET_PATH = 103;
const SOCKET_FILE = '.s.PGSQL.5432'; // where libpq-style clients look for "port 5432" in a socket directory

/**
 * A new 0700 directory for the socket: no other local user can reach it (PGlite asks for no password). In the temporary
 * directory, or in /tmp when that one's path is too long for a socket path (a long TMPDIR, as on macOS).
 */
function createSocketDir(): string {
  const prefix = 'users-posts-pglite-';
  const fits = (base: string) => Buffer.byteLength(path.join(base, `${prefix}XXXXXX`, SOCKET_FILE)) <= MAX_SOCKET_PATH;
  const base = [os.tmpdir(), '/tmp'].find(fits);
  if (!base) throw new Error(`the temporary directory's path is too long for a Unix socket (${os.tmpdir()}): set TMPDIR to a shorter one`);
  return mkdtempSync(path.join(base, prefix));
}

/**
 * Takes the lock of `dir` (DirectoryLockedError at once if another process, or this one, has it open), then starts the
 * thread that opens PGlite on it. Returns at once.
 *
 * Why a thread: opening PGlite (compiling PostgreSQL's WebAssembly and starting it) takes ~0.6 s of CPU, which then
 * runs beside the app's own start instead of before it, and every statement runs off the thread that serves HTTP.
 */
export function startPGliteThread(dir: string, options: PGliteThreadOptions = {}): PGliteThread {
  if (options.optimiseWebAssembly === false) keepWebAssemblyOnBaselineCompiler(); // before PGlite's module runs
  const release = dir === 'memory://' ? () => undefined : lockDirectory(dir);
  // Created here, so that the socket's address is known before the thread listens on it.
  let socketDir: string;
  try {
    socketDir = createSocketDir();
  } catch (error) {
    release();
    throw error;
  }
  socketDirs.add(socketDir);
  const worker = new Worker(new URL('./pglite-worker.js', import.meta.url), {
    workerData: { dataDir: dir, socketPath: path.join(socketDir, SOCKET_FILE), postgresqlConf: PGLITE_POSTGRESQL_CONF },
    // Not the process's flags: a loader (`--import tsx` under pnpm dev or the seed) would load again for nothing,
    // and `--input-type` or `-e` make no sense for a file.
    execArgv: [],
  });

  // The thread's messages: the first says whether it listens; 'closed' answers stop(). Its end is watched for good.
  const messages: WorkerMessage[] = [];
  const waiting: (() => void)[] = [];
  let exit: { code: number; error?: Error } | undefined;
  let listeningNow = false;
  const exitListeners: ((error: Error) => void)[] = [];
  const wake = () => waiting.splice(0).forEach((resolve) => resolve());
  worker.on('message', (message: WorkerMessage) => (messages.push(message), wake()));
  worker.on('error', (error) => ((exit ??= { code: 1, error }), wake()));
  worker.on('exit', (code) => {
    exit = { code, error: exit?.error };
    wake();
    if (listeningNow && !stopping) {
      const error = exit.error ?? new Error(`the embedded database's thread ended on its own (exit code ${code})`);
      exitListeners.forEach((listener) => listener(error));
    }
  });
  /** The first message that `accept`s, or undefined once the thread has ended without one. */
  const waitFor = async (accept: (message: WorkerMessage) => boolean): Promise<WorkerMessage | undefined> => {
    for (;;) {
      const index = messages.findIndex(accept);
      if (index >= 0) return messages.splice(index, 1)[0];
      if (exit) return undefined;
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
  };

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      if (!exit) {
        worker.postMessage('close'); // handled once it listens, if it is still opening PGlite: never cut mid-close
        await waitFor((message) => message.type === 'closed');
        await worker.terminate();
      }
      release();
      rmSync(socketDir, { recursive: true, force: true });
      socketDirs.delete(socketDir);
    })());
  const listening = waitFor((message) => message.type !== 'closed').then(async (first) => {
    if (first?.type === 'ready') return void (listeningNow = true);
    await stop();
    if (first?.type === 'failed') throw revive(first.error);
    throw exit?.error ?? new Error(`the embedded database's thread stopped (exit code ${exit?.code}) before it opened the database`);
  });
  listening.catch(() => undefined); // not unhandled while nobody awaits it yet; whoever awaits it still gets the error
  return {
    url: `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(socketDir)}`,
    listening,
    stop,
    onUnexpectedExit: (listener) => void exitListeners.push(listener),
  };
}
