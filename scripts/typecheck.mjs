// `pnpm typecheck`: tsc on every package of the workspace and on the repository's own scripts, all of them in one run
// (none stops the others), so one run shows every error; exits non-zero when any has one.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');

/** Runs a command with its output passed through; resolves to its exit status. */
const run = (command, args) =>
  new Promise((resolve) => spawn(command, args, { cwd: root, stdio: 'inherit' }).once('exit', (code, signal) => resolve(signal ? 1 : (code ?? 1))));

const statuses = await Promise.all([
  // pnpm: each package's own `typecheck` script, in parallel, none stopping the others.
  run(process.platform === 'win32' ? 'pnpm.cmd' : 'pnpm', ['-r', '--parallel', '--no-bail', 'typecheck']),
  run(process.execPath, [tsc, '-p', 'scripts/tsconfig.json']).then((status) => {
    console.log(`scripts typecheck: ${status === 0 ? 'Done' : 'Failed'}`);
    return status;
  }),
]);
process.exit(statuses.some((status) => status !== 0) ? 1 : 0);
