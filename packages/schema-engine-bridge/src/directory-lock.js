// Exclusive ownership of a PGlite data directory by one process (PGlite is single-process: two openers corrupt it
// silently). Plain JS so the schema-engine bridge (bin/schema-engine.mjs) can use it without TypeScript.
//
// Written by hand rather than with proper-lockfile: that library keeps a lock alive by touching its mtime on a timer
// and declares it stale after a fixed silence, so it records no owner (the refusal could not name the pid to stop),
// and a server paused longer than the stale time (SIGSTOP, a debugger, a suspended laptop) would lose its lock while
// still running. Here the lock file holds pid + hostname + start time; it is stale only when that pid is not alive on
// this host, which is checked at once, without a timer.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, unlinkSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const LOCK_FILE = 'owner.lock';

/** Takeover files older than this were left by a process that died while taking over a stale lock. */
const TAKEOVER_STALE_MS = 10_000;
const UNREADABLE_STALE_MS = 5_000;

/** Locks this process holds, by lock path, so a second open in the same process is refused too and exit releases them. */
const held = new Map();

export class DirectoryLockedError extends Error {
  /** @param {string} dir @param {{ pid: number, hostname: string, startedAt: string, command?: string } | undefined} owner */
  constructor(dir, owner) {
    const who = owner
      ? `process ${owner.pid} on ${owner.hostname}${owner.command ? ` (${owner.command})` : ''}, since ${owner.startedAt}`
      : 'another process';
    const what =
      owner && owner.hostname !== os.hostname()
        ? `stop it first; if that host is gone, delete ${path.join(dir, LOCK_FILE)}`
        : `stop the server (pid ${owner ? owner.pid : '?'}) first, or use the HTTP API, or set PGLITE_DIR to another directory`;
    super(`The embedded database at ${dir} is in use by ${who}: PGlite allows one process per data directory. To change its data, ${what}.`);
    this.name = 'DirectoryLockedError';
    this.code = 'PGLITE_DIR_LOCKED';
    this.owner = owner;
  }
}

/** @param {number} pid */
function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return /** @type {NodeJS.ErrnoException} */ (error).code === 'EPERM'; // alive, owned by another user
  }
}

/** @param {string} file */
function readOwner(file) {
  try {
    const owner = JSON.parse(readFileSync(file, 'utf8'));
    return Number.isSafeInteger(owner?.pid) && typeof owner.hostname === 'string' ? owner : undefined;
  } catch {
    return undefined; // unreadable or half-written (its writer died between create and write): treated as stale
  }
}

/** @param {string} file @param {object} content */
function createExclusive(file, content) {
  const fd = openSync(file, 'wx'); // O_CREAT | O_EXCL: exactly one creator wins
  try {
    writeSync(fd, JSON.stringify(content));
  } finally {
    closeSync(fd);
  }
}

/** @param {string} file */
function isStale(file) {
  const owner = readOwner(file);
  // Unreadable: a creator between its O_EXCL open and its write (microseconds), or one that crashed there. Only the
  // latter is stale, so a lock is taken over for this only once it is older than any write could take.
  if (!owner) return { stale: Date.now() - (statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0) > UNREADABLE_STALE_MS, owner };
  if (owner.hostname !== os.hostname()) return { stale: false, owner }; // cannot tell: never taken over
  if (owner.pid === process.pid) return { stale: held.has(file) ? false : true, owner };
  return { stale: !isAlive(owner.pid), owner };
}

/**
 * Removes a stale lock. Takeovers are serialised by their own O_EXCL file, so two starters after a crash cannot both
 * remove a lock and both create one (the second would otherwise delete the first one's fresh lock).
 * @param {string} file @param {string} dir
 */
function takeOver(file, dir) {
  const takeover = `${file}.takeover`;
  try {
    createExclusive(takeover, { pid: process.pid });
  } catch (error) {
    if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'EEXIST') throw error;
    const age = Date.now() - statSync(takeover, { throwIfNoEntry: false })?.mtimeMs;
    if (age > TAKEOVER_STALE_MS) rmSync(takeover, { force: true });
    throw new DirectoryLockedError(dir, readOwner(file));
  }
  try {
    const check = isStale(file); // re-read under the takeover file: it may have been replaced meanwhile
    if (!check.stale) throw new DirectoryLockedError(dir, check.owner);
    rmSync(file, { force: true });
  } finally {
    rmSync(takeover, { force: true });
  }
}

/**
 * Takes the directory (creating it) for this process, or throws DirectoryLockedError naming the owner at once.
 * A lock whose process is not alive on this host is taken over. Returns the release function (idempotent).
 * @param {string} dir
 * @returns {() => void}
 */
export function lockDirectory(dir) {
  const absolute = path.resolve(dir);
  mkdirSync(absolute, { recursive: true });
  const file = path.join(absolute, LOCK_FILE);
  const content = {
    pid: process.pid,
    hostname: os.hostname(),
    startedAt: new Date().toISOString(),
    command: path.basename(process.argv[1] ?? process.argv0),
  };
  for (let attempt = 0; ; attempt++) {
    try {
      createExclusive(file, content);
      break;
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'EEXIST') throw error;
      const check = isStale(file);
      if (!check.stale || attempt >= 2) throw new DirectoryLockedError(absolute, check.owner);
      takeOver(file, absolute);
    }
  }
  held.set(file, content);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    held.delete(file);
    // Only our own lock is removed (never one another process took over after a `kill -9` of ours was presumed).
    if (readOwner(file)?.pid === process.pid && readOwner(file)?.startedAt === content.startedAt) unlinkSync(file);
  };
}

/**
 * Opens a database on `dir` with `open` while owning the directory: the lock is released when the handle is closed,
 * or at once when opening fails.
 * @template {{ close(): Promise<void> }} Handle
 * @param {string} dir
 * @param {() => Promise<Handle>} open
 * @returns {Promise<Handle>}
 */
export async function openOwned(dir, open) {
  const release = lockDirectory(dir);
  let handle;
  try {
    handle = await open();
  } catch (error) {
    release();
    throw error;
  }
  const close = handle.close.bind(handle);
  handle.close = async () => {
    try {
      await close();
    } finally {
      release();
    }
  };
  return handle;
}

/** The owner recorded in `dir`'s lock file, if any (for messages and tests). @param {string} dir */
export function directoryOwner(dir) {
  return readOwner(path.join(path.resolve(dir), LOCK_FILE));
}

// A process that ends without closing its database (process.exit, an uncaught error) still releases its locks;
// a kill -9 leaves the file, and the next opener finds its pid dead and takes over.
process.once('exit', () => {
  for (const [file, content] of held) {
    if (readOwner(file)?.startedAt === content.startedAt) rmSync(file, { force: true });
  }
});
