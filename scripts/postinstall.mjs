// postinstall: generates the Prisma client (`pnpm db:generate`) and builds apps/api/dist (`pnpm build`, when stale);
// after `pnpm install --prod` (no prisma CLI, no esbuild) it skips both.
// The production start runs apps/api/dist/main.js, which bundles the generated client, so a production install needs
// neither the CLI nor a fresh client; a development install (CLI present) always regenerates.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const prismaCli = path.join(root, 'node_modules/prisma/build/index.js');

if (existsSync(prismaCli)) {
  const result = spawnSync(process.execPath, [prismaCli, 'generate', '--config', 'prisma/prisma.config.ts'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
  // Then the production build, as `pnpm start` would make it on its first run: the newcomer's `pnpm install && pnpm
  // start` waits for it during the install, and the start is a start (issue 42). Not fatal: a tree mid-edit that does
  // not build still installs, and `pnpm start` builds (or says why not) when run.
  const build = spawnSync(process.execPath, [path.join(root, 'scripts/build.mjs'), '--if-stale'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) console.log('postinstall: the build failed (above); `pnpm start` will build again');
  process.exit(0);
}
const bundle = path.join(root, 'apps/api/dist/main.js');
console.log(
  existsSync(bundle)
    ? 'postinstall: no prisma CLI (production install): the built apps/api/dist/main.js carries the generated client'
    : 'postinstall: no prisma CLI (production install) and no build yet: run `pnpm build` where devDependencies are installed',
);
