// Cold start to ready, and idle and peak memory, of the product on its embedded default (the production start, built once
// before), on PostgreSQL, and of the embedded database alone (bench/baseline/embedded-database-alone.mjs): the floor.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PGLITE_POSTGRESQL_CONF } from '../../packages/db/src/embedded/pglite-thread.js';
import { productEntry } from '../product-build.js';

export interface StartupFigures {
  firstStartMs: number;
  /** The first start's RSS after ready + 3 s (it initialised the directory and migrated it): within ~10 % of later starts'. */
  firstIdleRssMb: number;
  laterStartsMs: number[];
  idleRssMb: number;
  /** The most the process held at any time until then (VmHWM): a container's memory limit must leave room for it. */
  peakRssMb: number;
  /** The same directory opened by PGlite alone on a main thread, no app (bench/baseline/embedded-database-alone.mjs). */
  databaseAlone: { startsMs: number[]; idleRssMb: number; peakRssMb: number };
}

const repoRoot = path.resolve(import.meta.dirname, '../..');

async function waitReady(url: string, child: ChildProcess, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(10);
  }
  throw new Error(`not ready within ${limitMs} ms`);
}

/** The process's resident memory now (VmRSS) and at its highest so far (VmHWM), in MB. */
function rssMb(pid: number): { now: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (field: string) => Math.round((Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1]) / 1024) * 10) / 10;
  return { now: mb('VmRSS'), peak: mb('VmHWM') };
}

/** A process to start: its Node arguments and environment (PORT is set by startOnce). */
interface Command {
  args: () => string[];
  env: Record<string, string>;
}

/** The product's production start on `dataDir` (and on PostgreSQL with a `databaseUrl`). */
const product = (dataDir: string, databaseUrl = ''): Command => ({
  args: () => productEntry(repoRoot), // builds on the first call: outside the timed span
  env: { DATA_DIR: dataDir, HOST: '127.0.0.1', LOG_LEVEL: 'warn', DATABASE_URL: databaseUrl, MIGRATE_ON_START: databaseUrl ? 'true' : 'false' },
});

/** Starts `command` once; returns ms from spawn to a 200 from /readyz (and RSS after idling `idleMs`). */
async function startOnce(command: Command, port: number, idleMs = 0): Promise<{ ms: number; rss?: { now: number; peak: number } }> {
  const args = command.args();
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: { ...process.env, ...command.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await waitReady(`http://127.0.0.1:${port}/readyz`, child, 60_000);
    const ms = Math.round(performance.now() - started);
    if (!idleMs) return { ms };
    await sleep(idleMs);
    return { ms, rss: rssMb(child.pid!) };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

/** Five starts on a data directory (or database) already set up, the last one idling 3 s before its RSS is read. */
async function laterStarts(command: Command, port: number): Promise<{ laterStartsMs: number[]; idleRssMb: number; peakRssMb: number }> {
  const laterStartsMs: number[] = [];
  let idleRssMb = 0;
  let peakRssMb = 0;
  for (let run = 0; run < 5; run++) {
    const result = await startOnce(command, port, run === 4 ? 3_000 : 0);
    laterStartsMs.push(result.ms);
    if (result.rss) ({ now: idleRssMb, peak: peakRssMb } = result.rss);
  }
  return { laterStartsMs, idleRssMb, peakRssMb };
}

/** The same on PostgreSQL (five starts, as on PGlite: one start moves by ±150 ms here): what the app itself costs. */
export async function measurePostgresStartup(
  databaseUrl: string,
  port = 4901,
): Promise<{ startsMs: number[]; idleRssMb: number; peakRssMb: number }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'users-posts-bench-'));
  try {
    await startOnce(product(dataDir, databaseUrl), port); // applies migrations once
    const { laterStartsMs, ...memory } = await laterStarts(product(dataDir, databaseUrl), port);
    return { startsMs: laterStartsMs, ...memory };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * The product's embedded start: a first start on a new data directory (it migrates), then five later ones; then, on
 * the same directory, five starts of the embedded database alone (the floor).
 */
export async function measureStartup(port = 4900): Promise<StartupFigures> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'users-posts-bench-'));
  try {
    const first = await startOnce(product(dataDir), port, 3_000);
    const later = await laterStarts(product(dataDir), port);
    const alone = await laterStarts(
      {
        args: () => ['bench/baseline/embedded-database-alone.mjs'],
        env: { DATA_DIR: dataDir, POSTGRESQL_CONF: JSON.stringify(PGLITE_POSTGRESQL_CONF) },
      },
      port,
    );
    return {
      firstStartMs: first.ms,
      firstIdleRssMb: first.rss!.now,
      ...later,
      databaseAlone: { startsMs: alone.laterStartsMs, idleRssMb: alone.idleRssMb, peakRssMb: alone.peakRssMb },
    };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
