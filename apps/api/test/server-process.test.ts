// The product as `pnpm start` runs it: a real process on the embedded database, answering, then stopping on SIGTERM.
import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { repoRoot } from '../src/paths.js';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'users-posts-e2e-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Running {
  child: ChildProcessWithoutNullStreams;
  base: string;
  output: () => string;
  exited: Promise<number | null>;
}

async function start(): Promise<Running> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    ADMIN_EMAIL: 'admin@example.com',
    ADMIN_PASSWORD: 'admin-password',
  };
  delete env.DATABASE_URL; // the embedded default, as on a fresh machine
  const child = spawn(process.execPath, ['--import', 'tsx', 'apps/api/src/main.ts'], { cwd: repoRoot, env });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  for (let waited = 0; waited < 60_000; waited += 100) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${output}`);
    const ready = await fetch(`${base}/readyz`).then((r) => r.ok, () => false);
    if (ready) return { child, base, output: () => output, exited };
    await sleep(100);
  }
  child.kill('SIGKILL');
  throw new Error(`server not ready within 60 s:\n${output}`);
}

async function usersQuery(base: string) {
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ users { id name posts { title } } }' }),
  });
  return { status: response.status, body: (await response.json()) as { data: { users: { name: string }[] } } };
}

describe('the server process (embedded default)', () => {
  it('starts, answers GraphQL and REST from the embedded database, and exits 0 on SIGTERM', async () => {
    const server = await start();
    const { status, body } = await usersQuery(server.base);
    expect(status).toBe(200);
    expect(body.data.users).toEqual([{ id: expect.any(String), name: 'Administrator', posts: [] }]);
    const rest = await fetch(`${server.base}/api/v1/users?fields=email`);
    expect(await rest.json()).toMatchObject({ code: 0, data: { total: 1, items: [{ email: 'admin@example.com' }] } });

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    const logLines = server.output().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logLines.some((line) => line.reqId && line.msg === 'request completed')).toBe(true);
    expect(server.output()).not.toContain('admin-password');
    expect(existsSync(path.join(dataDir, 'pglite'))).toBe(true);
    expect(existsSync(path.join(dataDir, 'secrets.json'))).toBe(true);
  });

  it('keeps its data across restarts of the same data directory', async () => {
    const server = await start();
    const { body } = await usersQuery(server.base);
    expect(body.data.users.map((user) => user.name)).toEqual(['Administrator']);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });
});
