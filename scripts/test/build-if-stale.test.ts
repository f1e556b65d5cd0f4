// The production build behind `pnpm start` (issues 34 and 42): rebuilt only when a file it was built from changed, so a
// second start does not spend its first seconds rebuilding 50 MB of JavaScript; and its first start copies the build's
// migrated data directory instead of running initdb and the migrations. One file: both rebuild apps/api/dist.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { appliedMigrations } from '../../packages/db/src/testing.js';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@jest/globals';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const buildStep = (...args: string[]) => {
  const run = spawnSync(process.execPath, ['scripts/build.mjs', ...args], { cwd: repoRoot, encoding: 'utf8' });
  expect(run.status).toBe(0);
  return run.stdout;
};

test('nothing changed since the last build: not rebuilt; a source touched since: rebuilt', () => {
  expect(buildStep()).toMatch(/^built apps\/api\/dist\/main\.js/);
  expect(buildStep('--if-stale')).toMatch(/is current .*not rebuilt/);
  // A source file the bundle holds, saved again (its time moves, as an editor's save would move it).
  const source = path.join(repoRoot, 'apps/api/src/contract/text.ts');
  const later = new Date(Date.now() + 2_000);
  utimesSync(source, later, later);
  expect(buildStep('--if-stale')).toMatch(/^built apps\/api\/dist\/main\.js/);
  expect(buildStep('--if-stale')).toMatch(/not rebuilt/);
}, 180_000);

test('a first start from the build copies its migrated data directory (over what a stopped one left): ready, every migration there before it started, none applied by it', async () => {
  buildStep('--if-stale');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'users-posts-first-start-'));
  try {
    // What a first start stopped midway leaves (the copy's PG_VERSION comes last): a truncated file, no PG_VERSION.
    mkdirSync(path.join(dataDir, 'pglite/global'), { recursive: true });
    writeFileSync(path.join(dataDir, 'pglite/global/pg_control'), '');
    const startedAt = new Date();
    const server = spawn(process.execPath, ['apps/api/dist/main.js'], {
      cwd: repoRoot,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        NODE_ENV: 'development',
        DATABASE_URL: '',
        REDIS_URL: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    server.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    // Ready is the server's own line (on a loaded machine a first start takes what it takes: the bound is the test's).
    const base = await new Promise<string>((resolve, reject) => {
      server.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
        const listening = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
        if (listening) resolve(listening[1]!);
      });
      server.once('exit', (code) => reject(new Error(`the server exited (${code}) before it was ready:\n${output}`)));
    });
    try {
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      expect((await fetch(`${base}/api/v1/users`)).status).toBe(200);
    } finally {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    const { applied, latest } = await appliedMigrations(path.join(dataDir, 'pglite'));
    expect(applied).toBe(readdirSync(path.join(repoRoot, 'prisma/migrations')).filter((name) => /^\d{14}_/.test(name)).length);
    expect(latest!.getTime()).toBeLessThan(startedAt.getTime());
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 240_000);
