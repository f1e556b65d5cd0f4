// The ownership lock of a PGlite data directory (src/directory-lock.js): one owner, refusals naming it, stale takeover.
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDatabase, DirectoryLockedError, directoryOwner, lockDirectory } from '../src/index.js';
import { temporaryDirectories } from './support/temp-dirs.js';

const tempDir = temporaryDirectories('users-posts-lock-');

/** A pid that is certainly not alive: a child that has exited (and been reaped). */
const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!;

describe('the data-directory lock', () => {
  it('records this process, refuses a second taker naming the pid and what to do, and is released', () => {
    const dir = tempDir();
    const release = lockDirectory(dir);
    expect(directoryOwner(dir)).toMatchObject({ pid: process.pid, hostname: os.hostname() });
    expect(() => lockDirectory(dir)).toThrow(DirectoryLockedError);
    expect(() => lockDirectory(dir)).toThrow(
      `stop the server (pid ${process.pid}) first, or use the HTTP API, or set PGLITE_DIR to another directory`,
    );
    release();
    release(); // idempotent
    expect(existsSync(path.join(dir, 'owner.lock'))).toBe(false);
    lockDirectory(dir)();
  });

  it('takes over a lock whose pid is dead on this host, and a half-written one', () => {
    const dir = tempDir();
    const file = path.join(dir, 'owner.lock');
    writeFileSync(file, JSON.stringify({ pid: deadPid(), hostname: os.hostname(), startedAt: '2026-01-01T00:00:00.000Z' }));
    const release = lockDirectory(dir);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ pid: process.pid });
    release();
    writeFileSync(file, '{"pid":');
    // Fresh, it may be a creator between its open and its write: refused. Older than any write takes: taken over.
    expect(() => lockDirectory(dir)).toThrow(/in use/);
    const old = new Date(Date.now() - 60_000);
    utimesSync(file, old, old);
    lockDirectory(dir)();
  });

  it('never takes over a lock held from another host (it cannot tell whether that process lives)', () => {
    const dir = tempDir();
    writeFileSync(
      path.join(dir, 'owner.lock'),
      JSON.stringify({ pid: deadPid(), hostname: 'elsewhere.example', startedAt: '2026-01-01T00:00:00.000Z' }),
    );
    expect(() => lockDirectory(dir)).toThrow(/in use by process \d+ on elsewhere\.example.*delete .*owner\.lock/);
  });

  it('is taken by createDatabase: a second open of the directory is refused until the first is closed', async () => {
    const dir = tempDir();
    const first = await createDatabase({ pgliteDir: dir, migrate: false });
    await expect(createDatabase({ pgliteDir: dir, migrate: false })).rejects.toThrow(DirectoryLockedError);
    await first.close();
    expect(directoryOwner(dir)).toBeUndefined();
    await (await createDatabase({ pgliteDir: dir, migrate: false })).close();
  }, 60_000);
});
