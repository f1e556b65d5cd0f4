// The product as `pnpm start` runs it: a real process on the embedded database, answering, then stopping on SIGTERM.
import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { CORE_SCHEMA, load } from 'js-yaml';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../../src/paths.js';
import { startApi, type ApiProcess } from '../support/processes.js';

// Each test waits on the process's own signals, bounded by startApi (ready within 90 s) and stop (30 s of grace), which
// fail with the server's output; jest's timeout is only an outer bound above theirs. A first start on a loaded 2-core
// machine (initdb, migrations) can take a good part of a minute.
jest.setTimeout(180_000);

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'users-posts-e2e-'));
const started: ApiProcess[] = [];
afterAll(async () => {
  await Promise.all(started.map((server) => server.stop(5_000)));
  rmSync(dataDir, { recursive: true, force: true });
});

/** The embedded default, as on a fresh machine (startApi drops DATABASE_URL), on one data directory for both tests. */
async function start(): Promise<ApiProcess> {
  const server = await startApi({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    ADMIN_EMAIL: 'admin@example.com',
    ADMIN_PASSWORD: 'admin-password',
  });
  started.push(server);
  return server;
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
    const rest = await fetch(`${server.base}/api/v1/users?fields=email,role`);
    // Anonymous: the administrator is listed, its address is not (SPEC §3.1).
    expect(await rest.json()).toMatchObject({ code: 0, data: { total: 1, items: [{ email: '', role: 'ADMIN' }] } });
    // The build's copy of the contract (read as JSON at start) is the repository's, as written and as parsed.
    const written = readFileSync(path.join(repoRoot, 'openapi/openapi.yaml'), 'utf8');
    expect(await (await fetch(`${server.base}/openapi.yaml`)).text()).toBe(written);
    expect(await (await fetch(`${server.base}/openapi.json`)).json()).toEqual(load(written, { schema: CORE_SCHEMA }));

    expect(await server.stop()).toBe(0);
    const logLines = server
      .output()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logLines.some((line) => line.reqId && line.msg === 'request completed')).toBe(true);
    expect(server.output()).not.toContain('admin-password');
    expect(existsSync(path.join(dataDir, 'pglite'))).toBe(true);
    expect(existsSync(path.join(dataDir, 'secrets.json'))).toBe(true);
  });

  it('keeps its data across restarts of the same data directory', async () => {
    const server = await start();
    const { body } = await usersQuery(server.base);
    expect(body.data.users.map((user) => user.name)).toEqual(['Administrator']);
    expect(await server.stop()).toBe(0);
  });
});
