// The two processes under load: the product (`pnpm start`'s command) and the raw-pg baseline, on one seeded database.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { productEntry } from './product-build.js';

export const repoRoot = path.resolve(import.meta.dirname, '..');

/** A TCP port free on loopback right now. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface Server {
  base: string;
  pid: number;
  stop(): Promise<void>;
}

export interface Product extends Server {
  /** Bearer access token of the bench administrator. */
  token: string;
  /** That administrator's user id (author of the created posts). */
  userId: number;
}

/** Polls `url` (a GET, or `init`, e.g. a GraphQL POST for servers without a readiness endpoint) until it answers 2xx. */
async function waitReady(url: string, child: ChildProcess, limitMs = 60_000, init?: RequestInit): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url}: server exited with ${child.exitCode}`);
    if (
      await fetch(url, init).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await sleep(50);
  }
  throw new Error(`${url}: not ready within ${limitMs} ms`);
}

function stopper(child: ChildProcess, cleanup: () => void = () => {}): () => Promise<void> {
  // A bench that dies or is interrupted (process.exit in bench/postgres.ts) takes its servers with it.
  const orphanGuard = () => {
    child.kill('SIGKILL');
    cleanup();
  };
  process.once('exit', orphanGuard);
  return async () => {
    process.off('exit', orphanGuard);
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    cleanup();
  };
}

/** BENCH_NODE_ENV=production runs the product in production mode (fresh secrets), e.g. Prisma's minimal error format. */
function modeEnv(): Record<string, string> {
  if (process.env.BENCH_NODE_ENV !== 'production') return {};
  const secret = () => randomBytes(32).toString('hex');
  return { NODE_ENV: 'production', JWT_ACCESS_SECRET: secret(), JWT_REFRESH_SECRET: secret(), SESSION_SECRET: secret(), SIGNING_SECRET: secret() };
}

/**
 * The product on `databaseUrl` (migrated at start), exactly as the production start runs it (the built file, see
 * product-build.ts), with the rate limit out of the way and an administrator to create posts with. `nodeArgs` go before
 * the entry (e.g. `--cpu-prof`); `root` is
 * the checkout to run (another worktree, for before/after comparisons); `nodeBinary` the node to run it with (BENCH_NODES);
 * `extraEnv` settings of this run (bench/compare.ts's COMPARE_ENV_<n>).
 */
export async function startProduct(
  databaseUrl: string,
  port: number,
  nodeArgs: string[] = [],
  root = repoRoot,
  nodeBinary = process.execPath,
  extraEnv: Record<string, string> = {},
): Promise<Product> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'users-posts-bench-'));
  const child = spawn(nodeBinary, [...nodeArgs, ...productEntry(root)], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      MIGRATE_ON_START: 'true',
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      RATE_LIMIT_MAX: '100000000',
      ADMIN_EMAIL: 'bench@example.com',
      ADMIN_PASSWORD: 'bench-password',
      // The client's trusted documents, for the persisted scenario (documents sent as text still run).
      GRAPHQL_PERSISTED_DOCUMENTS: 'packages/client/persisted-documents.json',
      ...modeEnv(),
      ...extraEnv,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const stop = stopper(child, () => rmSync(dataDir, { recursive: true, force: true }));
  try {
    await waitReady(`${base}/readyz`, child);
    const login = await fetch(`${base}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bench@example.com', password: 'bench-password' }),
    });
    const token = ((await login.json()) as { accessToken: string }).accessToken;
    const userId = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).userId as number;
    return { base, pid: child.pid!, token, userId, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The raw-pg baseline (bench/baseline/server.ts) in its own process on the same database. */
export async function startBaseline(databaseUrl: string, port: number, nodeBinary = process.execPath, nodeArgs: string[] = []): Promise<Server> {
  const child = spawn(nodeBinary, [...nodeArgs, '--import', 'tsx', 'bench/baseline/server.ts'], {
    cwd: repoRoot,
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const stop = stopper(child);
  try {
    await waitReady(`${base}/readyz`, child);
    return { base, pid: child.pid!, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

export type PeerKind = 'apollo' | 'postgraphile';
const peerEntry: Record<PeerKind, string> = { apollo: 'bench/peers/apollo/server.ts', postgraphile: 'bench/peers/postgraphile/server.ts' };

/**
 * A peer a user would pick instead of the product (Apollo Server 5 + DataLoader, PostGraphile 5), in its own process on
 * the same database, in production mode. Neither has a readiness endpoint: ready is the first answered `{ __typename }`.
 */
export async function startPeer(kind: PeerKind, databaseUrl: string, port: number, nodeBinary = process.execPath): Promise<Server> {
  const child = spawn(nodeBinary, ['--import', 'tsx', peerEntry[kind]], {
    cwd: repoRoot,
    env: { ...process.env, NODE_ENV: 'production', GRAPHILE_ENV: 'production', DATABASE_URL: databaseUrl, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const stop = stopper(child);
  try {
    await waitReady(`${base}/graphql`, child, 60_000, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    return { base, pid: child.pid!, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Demo data of the scenarios (issue 11's): 2,000 users × 10 posts (besides the administrator), then fresh planner statistics. */
export async function seed(databaseUrl: string): Promise<void> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query(
      `INSERT INTO users (name, email, updated_at) SELECT 'User ' || g, 'user' || g || '@example.com', now() FROM generate_series(1, 2000) g`,
    );
    await db.query(
      `INSERT INTO posts (title, content, author_id, updated_at) SELECT 'Post ' || g, 'Body ' || g, u.id, now() FROM users u, generate_series(1, 10) g WHERE u.email LIKE 'user%'`,
    );
    await db.query('ANALYZE');
  } finally {
    await db.end();
  }
}
