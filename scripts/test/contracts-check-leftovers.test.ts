// Issue 40, item 5: `pnpm contracts:check` once left empty `users-posts-pglite-*` folders in the temporary directory.
// The whole gate runs here with a temporary directory of its own, which must be as empty afterwards as before.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@jest/globals';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Runs the gate as `pnpm contracts:check` does (tsx), with `env` added; resolves with its output once it exits. */
function runGate(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/contracts-check.ts'], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

test('pnpm contracts:check leaves nothing in the temporary directory, whatever it finds', async () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'contracts-check-tmp-'));
  try {
    // The caches of the tools that run the gate (tsx's compiled files, jiti's copy of prisma.config.ts that the Prisma
    // CLI loads) are kept between runs on purpose and are turned off, so that anything left is the gate's own.
    const { output } = await runGate({ TMPDIR: tmp, TSX_DISABLE_CACHE: '1', JITI_FS_CACHE: 'false' });
    // It ran to its last step (passing or failing: other work in the tree may fail a check; the folder is the point).
    expect(output).toMatch(/^[✓✗] no breaking contract change/m);
    expect(readdirSync(tmp)).toEqual([]);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}, 180_000);
