// Issue 41's round trip: the server records what two named clients send, `pnpm contracts:usage export` writes the usage
// file, and the gate, shown a removal after its sunset of a field only one of them used, names that client alone.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from '@jest/globals';
import { useTestApp } from '../../apps/api/test/support/app.js';
import { exportUsage } from '../contracts-usage.js';
import { checkEvolution } from '../contracts/evolution.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const suite = useTestApp({ contractUsage: { enabled: true, flushIntervalMs: 3_600_000 } });
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

async function send(client: string, query: string): Promise<void> {
  const answer = await suite.app.inject({ method: 'POST', url: '/graphql', headers: { 'x-client-name': client }, payload: { query } });
  expect(answer.statusCode).toBe(200);
  expect(answer.json()).not.toHaveProperty('errors');
}

it('a field removed after its sunset, used by one of two clients: the gate fails naming that client and its operation only', async () => {
  await send('mobile-app', 'query MobileFeed { posts(limit: 1) { id content } }');
  await send('web-app', 'query WebPosts { posts(limit: 1) { id title } }');
  await suite.app.contractUsage.flush();

  // A repository whose base deprecated Post.title with a sunset long past, and whose working tree removes it.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'usage-round-trip-'));
  dirs.push(dir);
  const sdl = readFileSync(path.join(repoRoot, 'schema/schema.graphql'), 'utf8');
  const title = '  "Title, 1–200 characters."\n  title: String!\n  "Body text';
  expect(sdl.split(title)).toHaveLength(2);
  mkdirSync(path.join(dir, 'schema'));
  writeFileSync(
    path.join(dir, 'schema/schema.graphql'),
    sdl.replace(title, title.replace('String!', 'String! @deprecated(reason: "Use headline. Sunset: 2000-01-01.")')),
  );
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false', ...args], {
      cwd: dir,
      stdio: 'pipe',
    });
  git('init', '-q');
  git('add', '.');
  git('commit', '-q', '-m', 'Post.title deprecated');
  writeFileSync(path.join(dir, 'schema/schema.graphql'), sdl.replace(title, '  "Body text'));
  const usagePath = path.join(dir, 'contracts/usage.json');
  await exportUsage(suite.app.db.prisma, usagePath, { days: 30 });

  const { failures } = await checkEvolution(dir, 'HEAD', { usagePath, windowDays: 30 });
  expect(failures).toEqual([expect.stringContaining("Field 'title' (deprecated) was removed from object type 'Post'")]);
  expect(failures[0]).toContain('breaking for clients that used it within 30 days: web-app (WebPosts)');
  expect(failures[0]).not.toContain('mobile-app');
}, 60_000);
