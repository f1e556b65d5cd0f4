// Real servers on loopback for process-level tests: throwaway PostgreSQL clusters, redis-server, and the product itself.
import { describe } from '@jest/globals';
import { applyMigrations } from '@users-posts/db';
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { createServer, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { repoRoot } from '../../src/paths.js';
import { describeRequiring } from './requirements.js';

const run = promisify(execFile);

/** Where Debian's postgresql-15 package puts the server binaries. */
export const PG_BIN = '/usr/lib/postgresql/15/bin';
const asRoot = process.getuid?.() === 0;

/** Clean-ups that must happen even if a suite dies before its afterAll (synchronous: they run at process exit). */
const atExit = new Set<() => void>();
process.once('exit', () => {
  for (const cleanup of atExit) {
    try {
      cleanup();
    } catch {
      // best effort: the process is going away
    }
  }
});

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (result: boolean) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.connect(port, '127.0.0.1');
  });
}

async function waitFor(what: string, ms: number, check: () => Promise<boolean>, failed?: () => string | undefined): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const failure = failed?.();
    if (failure) throw new Error(`${what}: ${failure}`);
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(100);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// PostgreSQL

/** A throwaway PostgreSQL 15 cluster (initdb into a temp dir from /usr/lib/postgresql/15/bin, run as the `postgres` user via `runuser -u postgres --` when we are root, loopback only, fsync=off, a fixed free port kept across stop/start). */
export interface PostgresServer {
  readonly port: number;
  /** Creates a fresh database with every migration applied (via @users-posts/db's applyMigrations) and returns its URL. */
  createDatabase(): Promise<string>;
  /** Stops the server (mode 'fast' by default; 'immediate' too) and starts it again on the same port and data. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOPs the server's processes: connections stay open but nothing answers (a hung or partitioned server). */
  freeze(): Promise<void>;
  /** SIGCONTs them again. */
  thaw(): Promise<void>;
  /** Stops it and removes its files. */
  destroy(): Promise<void>;
}

/** The pids of the running server (postmaster first, then its children), from its postmaster.pid. */
function serverPids(data: string): number[] {
  const postmaster = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const { stdout } = spawnSync('ps', ['-o', 'pid=', '--ppid', String(postmaster)], { encoding: 'utf8' });
  return [
    postmaster,
    ...stdout
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((pid) => pid > 0),
  ];
}

/** Sends `signal` to every process of the server at `data` (nothing when it is not running). */
function signalServer(data: string, signal: NodeJS.Signals): void {
  if (!existsSync(path.join(data, 'postmaster.pid'))) return;
  for (const pid of serverPids(data)) process.kill(pid, signal);
}

/** A PostgreSQL binary run as the `postgres` user (initdb and the server refuse to run as root). */
function pgCommand(binary: string, args: string[]): [string, string[]] {
  const file = path.join(PG_BIN, binary);
  return asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
}

async function pgRun(binary: string, args: string[]): Promise<void> {
  const [file, argv] = pgCommand(binary, args);
  await run(file, argv, { timeout: 120_000 });
}

export async function startPostgres(): Promise<PostgresServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'users-posts-pg-'));
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'server.log');
  const port = await freePort();
  const pgCtl = (...args: string[]) => pgRun('pg_ctl', ['-D', data, ...args]);
  const forceStop = () => {
    try {
      signalServer(data, 'SIGCONT'); // a frozen server would not act on the stop
    } catch {
      // not running
    }
    const [file, argv] = pgCommand('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
    spawnSync(file, argv, { stdio: 'ignore', timeout: 30_000 });
    rmSync(dir, { recursive: true, force: true });
  };
  atExit.add(forceStop);
  try {
    if (asRoot) await run('chown', ['postgres:postgres', dir]);
    await pgRun('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
    const settings = [
      `port = ${port}`,
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = ''`,
      'fsync = off', // commits still reach the OS (synchronous_commit stays on), so an immediate stop keeps them
      'full_page_writes = off',
      'max_connections = 100',
    ];
    await appendFile(path.join(data, 'postgresql.conf'), `\n# test harness\n${settings.join('\n')}\n`);
  } catch (error) {
    forceStop();
    atExit.delete(forceStop);
    throw error;
  }

  const serverUrl = `postgres://postgres@127.0.0.1:${port}`;
  const server: PostgresServer = {
    port,
    async createDatabase() {
      const name = `users_posts_${randomUUID().slice(0, 8)}`;
      const client = new pg.Client({ connectionString: `${serverUrl}/postgres` });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name}"`);
      } finally {
        await client.end();
      }
      const url = `${serverUrl}/${name}`;
      await applyMigrations({ databaseUrl: url });
      return url;
    },
    async stop(mode = 'fast') {
      await pgCtl('-m', mode, '-w', 'stop');
    },
    async start() {
      await pgCtl('-l', log, '-w', '-t', '60', 'start');
      await waitFor(`PostgreSQL on port ${port}`, 30_000, () => accepts(port));
    },
    async freeze() {
      signalServer(data, 'SIGSTOP');
    },
    async thaw() {
      signalServer(data, 'SIGCONT');
    },
    async destroy() {
      await server.thaw().catch(() => undefined);
      await pgCtl('-m', 'immediate', 'stop').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
      atExit.delete(forceStop);
    },
  };
  try {
    await server.start();
  } catch (error) {
    const output = existsSync(log) ? spawnSync('tail', ['-n', '20', log], { encoding: 'utf8' }).stdout : '';
    await server.destroy();
    throw new Error(`PostgreSQL did not start: ${(error as Error).message}\n${output}`);
  }
  return server;
}

// ---------------------------------------------------------------------------------------------------------------
// Redis

/** A redis-server (from PATH; Debian's `redis-server` package) on a free loopback port, no persistence. */
export interface RedisServer {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/** Resolves with the exit code once `child` has exited (at once if it already has). */
function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** SIGTERM, then SIGKILL if the process is still there after `graceMs`; resolves with the exit code. */
async function terminate(child: ChildProcess, graceMs: number): Promise<number | null> {
  const exited = exitOf(child);
  if (child.exitCode !== null || child.signalCode !== null) return exited;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

export async function startRedis(): Promise<RedisServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'users-posts-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';
  const kill = () => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  atExit.add(kill);

  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async start() {
      if (child && child.exitCode === null && child.signalCode === null) return;
      output = '';
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no'];
      const started = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      child = started;
      started.stdout?.on('data', (chunk) => (output += chunk));
      started.stderr?.on('data', (chunk) => (output += chunk));
      const failed = () => (started.exitCode !== null ? `exited with ${started.exitCode}:\n${output}` : undefined);
      await waitFor(`redis-server on port ${port}`, 30_000, async () => /Ready to accept connections/.test(output) && accepts(port), failed);
    },
    async stop() {
      if (child) await terminate(child, 10_000);
    },
    async destroy() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
      atExit.delete(kill);
    },
  };
  try {
    await server.start();
  } catch (error) {
    await server.destroy();
    throw error;
  }
  return server;
}

// ---------------------------------------------------------------------------------------------------------------
// The product

/** The product from source (`node --import tsx apps/api/src/main.ts`, cwd = repo root: the code `pnpm build` bundles; the bundle itself is started by scripts/check-production-install.sh), on a free port, waiting for /readyz. */
export interface ApiProcess {
  readonly base: string; // http://127.0.0.1:PORT
  readonly wsUrl: string; // ws://127.0.0.1:PORT/graphql
  readonly child: ChildProcess;
  /** stdout+stderr so far. */
  output(): string;
  readonly exited: Promise<number | null>;
  /** SIGTERM and wait for the exit code (SIGKILL after `graceMs`, default 30 s, if it has not exited by then). */
  stop(graceMs?: number): Promise<number | null>;
}

/** The /metrics token of the processes started here (the product serves /metrics only with one, or on its own port). */
export const TEST_METRICS_TOKEN = 'test-metrics-token-0123456789';

/**
 * Starts the product with `env` merged over process.env minus DATABASE_URL/REDIS_URL (so the embedded database and
 * in-memory state unless `env` names them); sets HOST=127.0.0.1, a free PORT, LOG_LEVEL=warn and a temporary
 * DATA_DIR (removed after exit) unless given. Resolves once GET /readyz answers 200 (within `readyWithinMs`).
 */
export async function startApi(env: Record<string, string>, readyWithinMs = 90_000): Promise<ApiProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const ownDataDir = env.DATA_DIR ? undefined : mkdtempSync(path.join(os.tmpdir(), 'users-posts-api-'));
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  delete childEnv.DATABASE_URL;
  delete childEnv.REDIS_URL;
  Object.assign(
    childEnv,
    { HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', METRICS_TOKEN: TEST_METRICS_TOKEN },
    ownDataDir ? { DATA_DIR: ownDataDir } : {},
    env,
  );

  const child = spawn(process.execPath, ['--import', 'tsx', 'apps/api/src/main.ts'], {
    cwd: repoRoot,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const kill = () => {
    child.kill('SIGKILL');
    if (ownDataDir) rmSync(ownDataDir, { recursive: true, force: true });
  };
  atExit.add(kill);
  const exited = exitOf(child).then((code) => {
    atExit.delete(kill);
    if (ownDataDir) rmSync(ownDataDir, { recursive: true, force: true });
    return code;
  });

  const base = `http://127.0.0.1:${port}`;
  const api: ApiProcess = {
    base,
    wsUrl: `ws://127.0.0.1:${port}/graphql`,
    child,
    output: () => output,
    exited,
    async stop(graceMs = 30_000) {
      await terminate(child, graceMs);
      return exited;
    },
  };
  try {
    const ready = () =>
      fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5_000) }).then(
        (r) => r.ok,
        () => false,
      );
    const failed = () =>
      child.exitCode !== null || child.signalCode !== null ? `exited early (${child.exitCode ?? child.signalCode}):\n${output}` : undefined;
    await waitFor(`the API on port ${port}`, readyWithinMs, ready, failed);
  } catch (error) {
    await api.stop(5_000);
    throw new Error(`${(error as Error).message}\n${output}`);
  }
  return api;
}

// ---------------------------------------------------------------------------------------------------------------
// Which suites run

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
    try {
      accessSync(path.join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** What the process suites need and this machine lacks (empty when they can run). */
export function missingServerRequirements(): string[] {
  const missing: string[] = [];
  if (!existsSync(path.join(PG_BIN, 'initdb')) || !existsSync(path.join(PG_BIN, 'pg_ctl'))) missing.push(`PostgreSQL 15 binaries in ${PG_BIN}`);
  if (asRoot && !onPath('runuser')) missing.push('runuser (to run PostgreSQL as the postgres user)');
  if (!onPath('redis-server')) missing.push('redis-server on PATH (apt-get install -y redis-server)');
  if (!process.env.DATABASE_URL) missing.push('DATABASE_URL (these suites run in the PostgreSQL pass only)');
  return missing;
}

/**
 * `describe` when PostgreSQL binaries, redis-server and DATABASE_URL (the PostgreSQL test pass) are present, else
 * skipped with the reason in `pnpm test`'s summary; with REQUIRE_CLUSTER_TESTS=1 a missing requirement fails instead.
 */
export const describeWithServers: typeof describe = describeRequiring({
  suites: 'the process suites of several instances (apps/api/test/cluster)',
  missing: missingServerRequirements(),
  requiredBy: 'REQUIRE_CLUSTER_TESTS',
  howToRun: 'DATABASE_URL=postgres://… pnpm test, with PostgreSQL 15 and redis-server installed (.ci/run does)',
});
