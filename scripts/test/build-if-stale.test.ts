// `pnpm start`'s build step (`scripts/build.mjs --if-stale`, issue 34): the bundle is rebuilt only when a file it was
// built from changed, so a second start does not spend its first seconds rebuilding 50 MB of JavaScript.
import { spawnSync } from 'node:child_process';
import { utimesSync } from 'node:fs';
import path from 'node:path';
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
