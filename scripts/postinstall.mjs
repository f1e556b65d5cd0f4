// postinstall: generates the Prisma client (`pnpm db:generate`); after `pnpm install --prod` (no prisma CLI) it skips.
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
  process.exit(result.status ?? 1);
}
const bundle = path.join(root, 'apps/api/dist/main.js');
console.log(
  existsSync(bundle)
    ? 'postinstall: no prisma CLI (production install): the built apps/api/dist/main.js carries the generated client'
    : 'postinstall: no prisma CLI (production install) and no build yet: run `pnpm build` where devDependencies are installed',
);
