// Throughput scenarios (autocannon) against the real server process on PostgreSQL: req/s and latency percentiles.
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

const repoRoot = path.resolve(import.meta.dirname, '../..');

export interface Scenario {
  name: string;
  method?: 'GET' | 'POST';
  path: string;
  body?: unknown;
  auth?: boolean;
}

export interface LoadFigures {
  name: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
}

export interface LoadTarget {
  base: string;
  token: string;
  userId: number;
  stop(): Promise<void>;
}

/** A fresh database on the given server, the product started on it, and demo data: 100 users × 5 posts. */
export async function startOnPostgres(adminUrl: string, port = 4902): Promise<LoadTarget> {
  const database = `bench_${Date.now()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'apps/api/src/main.ts'], {
    cwd: repoRoot,
    env: {
      ...process.env,
      DATABASE_URL: url.toString(),
      MIGRATE_ON_START: 'true',
      DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'users-posts-load-')),
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '100000000',
      ADMIN_EMAIL: 'bench@example.com',
      ADMIN_PASSWORD: 'bench-password',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600 && !(await fetch(`${base}/readyz`).then((r) => r.ok, () => false)); i++) await sleep(100);

  const db = new pg.Client({ connectionString: url.toString() });
  await db.connect();
  await db.query(`INSERT INTO users (name, email, updated_at) SELECT 'User ' || g, 'user' || g || '@example.com', now() FROM generate_series(1, 100) g`);
  await db.query(`INSERT INTO posts (title, content, author_id, updated_at) SELECT 'Post ' || g, 'Body ' || g, u.id, now() FROM users u, generate_series(1, 5) g WHERE u.email LIKE 'user%'`);
  await db.end();

  const login = await fetch(`${base}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'bench@example.com', password: 'bench-password' }) });
  const token = ((await login.json()) as { accessToken: string }).accessToken;
  const userId = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).userId as number;

  return {
    base,
    token,
    userId,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    },
  };
}

export async function runScenario(target: LoadTarget, scenario: Scenario, seconds = 10, connections = 20): Promise<LoadFigures> {
  const result = await autocannon({
    url: `${target.base}${scenario.path}`,
    method: scenario.method ?? 'GET',
    connections,
    duration: seconds,
    headers: {
      'content-type': 'application/json',
      ...(scenario.auth ? { authorization: `Bearer ${target.token}` } : {}),
    },
    ...(scenario.body ? { body: JSON.stringify(scenario.body) } : {}),
  });
  return {
    name: scenario.name,
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
  };
}
