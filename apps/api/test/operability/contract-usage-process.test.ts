// The usage round trip with the real processes (SPEC §6, issue 41): the server on the embedded database counts two named
// clients, keeps its counts through a stop, and `pnpm contracts:usage export` writes who used what.
import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { UsageFile } from '../../../../scripts/contracts-usage.js';
import { repoRoot } from '../../src/paths.js';
import { startApi } from '../support/processes.js';

const run = promisify(execFile);
// The test waits on the processes' own signals: the server's readiness and exit (startApi's 90 s, stop's 30 s of grace)
// and two exports' exits (each bounded below). jest's timeout is only an outer bound above all of them, for a loaded
// 2-core machine where a first start alone (initdb, migrations) can take a good part of a minute.
jest.setTimeout(300_000);
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'users-posts-usage-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** `pnpm contracts:usage export` as CI runs it (tsx, from the repository root), on the server's data directory. */
const exportUsage = (out: string) =>
  run(process.execPath, ['--import', 'tsx', 'scripts/contracts-usage.ts', 'export', '--out', out], {
    cwd: repoRoot,
    env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' },
    timeout: 60_000, // a hang detector: the export is one tsx start and a file read
  });

describe('pnpm contracts:usage export after a real server ran', () => {
  it('names the client that used an operation and a GraphQL field; refuses while the server holds the database', async () => {
    const server = await startApi({ DATA_DIR: dataDir });
    try {
      const as = (client: string) => ({ 'x-client-name': client });
      expect((await fetch(`${server.base}/api/v1/users?limit=1`, { headers: as('mobile') })).status).toBe(200);
      expect((await fetch(`${server.base}/api/v1/posts`, { headers: as('web') })).status).toBe(200);
      const graphql = await fetch(`${server.base}/graphql`, {
        method: 'POST',
        headers: { ...as('web'), 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'query WebPosts { posts(limit: 1) { id title } }' }),
      });
      expect(graphql.status).toBe(200);
      // The embedded directory is the running server's: the export says so instead of reading behind its back.
      await expect(exportUsage(path.join(dataDir, 'refused.json'))).rejects.toMatchObject({ stderr: expect.stringMatching(/pid|locked|in use/i) });
    } finally {
      expect(await server.stop()).toBe(0);
    }
    // Stopped well within the 10 s flush interval: its counts were added as it closed.
    const out = path.join(dataDir, 'contracts/usage.json');
    await exportUsage(out);
    const usage = JSON.parse(readFileSync(out, 'utf8')) as UsageFile;
    expect(Object.keys(usage.rest.listUsers!.clients)).toEqual(['mobile']);
    expect(Object.keys(usage.rest.listPosts!.clients)).toEqual(['web']);
    expect(usage.graphql['Post.title']!.clients).toEqual({ web: expect.objectContaining({ requests: 1, operations: ['WebPosts'] }) });
    expect(usage.graphql['Query.users']).toBeUndefined();
  });
});
