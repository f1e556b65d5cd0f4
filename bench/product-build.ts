// How the bench runs the product: the production build (`pnpm build`, once per checkout and bench process), then its file.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const built = new Set<string>();

/**
 * Node arguments that start the product of checkout `root` as the production start does (`node apps/api/dist/main.js`),
 * building it first the first time it is asked for. A checkout from before the production build (a before/after
 * comparison worktree) has no scripts/build.mjs: it runs as its own `pnpm start` did, through tsx.
 */
export function productEntry(root: string): string[] {
  if (!existsSync(path.join(root, 'scripts/build.mjs'))) return ['--import', 'tsx', 'apps/api/src/main.ts'];
  if (!built.has(root)) {
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    built.add(root);
  }
  return ['apps/api/dist/main.js'];
}
