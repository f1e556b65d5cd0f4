// A start that cannot succeed (port taken, data directory unwritable, PGlite directory owned, database unreachable, a
// manifest it cannot read, an administrator the API's rules refuse) exits non-zero at once with one human line naming
// the setting to change, through the real process; and the line for a file error blames the data directory only for a
// path on it.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { lockDirectory } from '@users-posts/db';
import { writeMigratedDataDirectory } from '@users-posts/db/testing';
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../../src/paths.js';
import { startupFailureLine } from '../../src/startup-failure.js';
import { freePort } from '../support/processes.js';

/**
 * The one bound on a server's run, a hang detector and not a deadline: a start that cannot succeed exits by itself,
 * and the tests wait on that exit, however slowly a loaded machine gets there (a second or two here when quiet, ~5×
 * that beside a load of 9 on 2 cores). Past it the server is killed and the test fails saying so, with its output so
 * far; jest's own timeout is a little longer, so that this failure is the one reported.
 */
const HANG_BOUND_MS = 180_000;
jest.setTimeout(HANG_BOUND_MS + 15_000);

const scratch = mkdtempSync(path.join(os.tmpdir(), 'users-posts-startup-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * An embedded database as a server finds it after its first start (created and migrated), written once. A start that
 * fails after the embedded database's thread began opening waits for it to open before it exits (the thread is never
 * cut mid-write): on a new directory that is initdb, in a process of its own (~850 MB at its peak), and every
 * migration, seconds per start (7 s against 1.6 s for the refused administrator, measured here), which the tests whose
 * subject is not the first start need not pay.
 */
const migratedTemplate = path.join(scratch, 'pglite-template');
beforeAll(() => writeMigratedDataDirectory(migratedTemplate), HANG_BOUND_MS);

/** PGLITE_DIR for one run: a copy of the migrated template of its own. */
function migratedPgliteDir(): { PGLITE_DIR: string } {
  const dir = mkdtempSync(path.join(scratch, 'pglite-'));
  cpSync(migratedTemplate, dir, { recursive: true });
  return { PGLITE_DIR: dir };
}

/**
 * Runs the server (as startApi does, from the sources) until it exits; its exit code and stdout+stderr, all of it (on
 * 'close', once both streams have ended). Rejects, with the output so far, if it has not exited within HANG_BOUND_MS.
 */
function runServer(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    DATA_DIR: mkdtempSync(path.join(scratch, 'data-')),
    ...env,
  };
  delete childEnv.REDIS_URL;
  if (!childEnv.DATABASE_URL) delete childEnv.DATABASE_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', 'apps/api/src/main.ts'], {
    cwd: repoRoot,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  let hung = false;
  const killer = setTimeout(() => {
    hung = true;
    child.kill('SIGKILL');
  }, HANG_BOUND_MS);
  return new Promise((resolve, reject) => {
    child.once('error', (error) => (clearTimeout(killer), reject(error)));
    child.once('close', (code) => {
      clearTimeout(killer);
      if (hung) reject(new Error(`the server did not exit within ${HANG_BOUND_MS / 1000} s (killed); its output so far:\n${output}`));
      else resolve({ code, output });
    });
  });
}

/** The output is exactly one line, without a stack trace. */
function oneLine(output: string): string {
  const lines = output.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(output).not.toMatch(/^\s+at /m);
  return lines[0]!;
}

describe('a start that cannot succeed', () => {
  it('names the port in use and PORT', async () => {
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    try {
      const { code, output } = await runServer({ PORT: String(port), ...migratedPgliteDir() });
      expect(code).toBe(1);
      expect(oneLine(output)).toMatch(new RegExp(`^users-posts: cannot start: port ${port} on 127\\.0\\.0\\.1 is already in use: .*set PORT`));
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('names the data directory it cannot write and DATA_DIR / PGLITE_DIR', async () => {
    const file = path.join(scratch, 'a-file');
    writeFileSync(file, '');
    // A directory under a regular file cannot be created, even by root (chmod would not stop root).
    const { code, output } = await runServer({ PORT: String(await freePort()), DATA_DIR: path.join(file, 'data') });
    expect(code).toBe(1);
    expect(oneLine(output)).toMatch(/cannot write the data directory: ENOTDIR on .*a-file\/data(\/pglite)?\. .*DATA_DIR .*PGLITE_DIR/);
  });

  it('names the PGlite directory another process owns', async () => {
    const pgliteDir = mkdtempSync(path.join(scratch, 'pglite-'));
    const release = lockDirectory(pgliteDir);
    try {
      const env: Record<string, string> = { PORT: String(await freePort()), PGLITE_DIR: pgliteDir, DATABASE_URL: '' };
      const { code, output } = await runServer(env);
      expect(code).toBe(1);
      expect(oneLine(output)).toMatch(new RegExp(`The embedded database at ${pgliteDir} is in use by .*${process.pid}`));
    } finally {
      release();
    }
  });

  it('names the unreachable PostgreSQL by host:port, without the password', async () => {
    const closedPort = await freePort();
    const { code, output } = await runServer({ PORT: String(await freePort()), DATABASE_URL: `postgres://app:hunter2@127.0.0.1:${closedPort}/shop` });
    expect(code).toBe(1);
    const line = oneLine(output);
    expect(line).toMatch(new RegExp(`cannot connect to PostgreSQL at app@127\\.0\\.0\\.1:${closedPort}/shop \\(DATABASE_URL\\): nothing answers`));
    expect(line).not.toContain('hunter2');
  });

  it('says when the PostgreSQL host name does not resolve', async () => {
    // .invalid never resolves (RFC 6761).
    const { code, output } = await runServer({ PORT: String(await freePort()), DATABASE_URL: 'postgres://app:hunter2@db.invalid:5432/shop' });
    expect(code).toBe(1);
    const line = oneLine(output);
    expect(line).toMatch(
      /cannot connect to PostgreSQL at app@db\.invalid:5432\/shop \(DATABASE_URL\): nothing answers at db\.invalid: the host name does not resolve \((ENOTFOUND|EAI_AGAIN)\)/,
    );
    expect(line).not.toContain('hunter2');
  });

  it('names ADMIN_EMAIL and ADMIN_PASSWORD when the contract or the password policy refuses them (a common password)', async () => {
    const { code, output } = await runServer({
      PORT: String(await freePort()),
      ...migratedPgliteDir(),
      ADMIN_EMAIL: 'root@localhost',
      ADMIN_PASSWORD: 'iloveyou1',
    });
    expect(code).toBe(1);
    const line = oneLine(output);
    expect(line).toMatch(
      /^users-posts: cannot start: the administrator of ADMIN_EMAIL \/ ADMIN_PASSWORD cannot be made: ADMIN_EMAIL must match format "email", ADMIN_PASSWORD is a commonly used password/,
    );
    expect(line).not.toContain('iloveyou1');
  });

  it('names a persisted documents manifest it cannot read by its setting, not as the data directory', async () => {
    const manifest = path.join(scratch, 'no-such-manifest.json');
    const { code, output } = await runServer({ PORT: String(await freePort()), ...migratedPgliteDir(), GRAPHQL_PERSISTED_DOCUMENTS: manifest });
    expect(code).toBe(1);
    const line = oneLine(output);
    expect(line).toContain(`GRAPHQL_PERSISTED_DOCUMENTS: cannot read ${manifest} (ENOENT)`);
    expect(line).not.toContain('data directory');
  });

  it('names a persisted documents manifest that is not JSON by its setting', async () => {
    const manifest = path.join(scratch, 'not-json-manifest.json');
    writeFileSync(manifest, '{"abc": ');
    const { code, output } = await runServer({ PORT: String(await freePort()), ...migratedPgliteDir(), GRAPHQL_PERSISTED_DOCUMENTS: manifest });
    expect(code).toBe(1);
    expect(oneLine(output)).toContain(`GRAPHQL_PERSISTED_DOCUMENTS: ${manifest} is not JSON (`);
  });
});

describe('the start-up line for a file error', () => {
  /** A real error of Node's file system, as a start meets it. */
  const fileError = (file: string): unknown => {
    try {
      return readFileSync(file);
    } catch (error) {
      return error;
    }
  };
  const env = { DATA_DIR: path.join(scratch, 'data'), PGLITE_DIR: path.join(scratch, 'elsewhere', 'pglite') };

  it('blames the data directory (or PGLITE_DIR) only for a path on it', () => {
    for (const onIt of [path.join(env.DATA_DIR, 'secrets.json'), path.join(env.PGLITE_DIR, 'PG_VERSION'), path.join(scratch, 'elsewhere')]) {
      expect(startupFailureLine(fileError(onIt), env)).toMatch(/^cannot write the data directory: ENOENT on .*DATA_DIR .*PGLITE_DIR/);
    }
  });

  it('says a file outside it (a missing file of the installation) is missing, without sending the operator to DATA_DIR', () => {
    // What a production build missing its copy of Swagger UI's logo said: "cannot write the data directory".
    const line = startupFailureLine(fileError(path.join(scratch, 'dist', 'static', 'logo.svg')), env);
    expect(line).toMatch(
      /^cannot open .*dist\/static\/logo\.svg \(ENOENT\), a file or directory this server needs outside its data directory: .*pnpm build.*pnpm install/,
    );
    expect(line).not.toContain('DATA_DIR');
  });
});
