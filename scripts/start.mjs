// `pnpm start`: builds apps/api/dist when anything it was made from has changed (scripts/build.mjs, in a child
// process, so that the build's memory is not the server's), then runs the built server in this same process: one Node
// start fewer than `build.mjs --if-stale && node apps/api/dist/main.js`, and esbuild is not even loaded when current.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIsCurrent } from './build.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

if (!(await buildIsCurrent())) {
  const build = spawnSync(process.execPath, [path.join(root, 'scripts/build.mjs')], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
await import('../apps/api/dist/main.js');
