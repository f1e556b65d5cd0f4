// `pnpm dev`: the product from source, restarted on every change (tsx watch), with the generated contract types kept
// up to date: `pnpm codegen` runs first and again whenever schema/schema.graphql, openapi/openapi.yaml, prisma/schema.prisma (the Prisma client) or the environment's
// schema changes (the server re-reads the contracts at its restart; the regenerated types are for the compiler and the
// editor; the environment's regenerated validator restarts the server once more, as tsx watches what it imports).
import { spawn, spawnSync } from 'node:child_process';
import { watch } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const contracts = ['schema/schema.graphql', 'openapi/openapi.yaml', 'apps/api/src/config/config-schema.ts', 'prisma/schema.prisma'];
const pnpm = process.platform === 'win32' ? 'pnpm.cmd' : 'pnpm';
const codegen = () => spawnSync(pnpm, ['-s', 'codegen'], { cwd: root, stdio: 'inherit' }).status === 0;

codegen();
let pending;
for (const file of contracts) {
  watch(path.join(root, file), () => {
    clearTimeout(pending);
    pending = setTimeout(() => console.log(codegen() ? `codegen: types regenerated after a change to ${file}` : 'codegen failed: see above'), 200);
  });
}
const server = spawn(
  pnpm,
  ['exec', 'tsx', 'watch', '--clear-screen=false', ...contracts.flatMap((file) => ['--include', file]), 'apps/api/src/main.ts'],
  { cwd: root, stdio: 'inherit' },
);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.kill(signal));
server.on('exit', (code) => process.exit(code ?? 0));
