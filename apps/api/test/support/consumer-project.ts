// A consumer's TypeScript project in a scratch directory: compiled with `tsc --strict` (ES modules, NodeNext), as
// the consumer tests (test/consumers) build what a generator wrote before running it against the server.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../../src/paths.js';

export const run = promisify(execFile);

/** Compiles `include` (globs relative to `workDir`) into `workDir/out`; throws tsc's report when it fails. */
export async function compileStrict(workDir: string, include: string[], what: string): Promise<void> {
  const compilerOptions = {
    strict: true,
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2022', 'DOM', 'DOM.Iterable'],
    types: ['node'],
    typeRoots: [path.join(repoRoot, 'node_modules/@types')],
    outDir: 'out',
    noEmitOnError: true,
  };
  writeFileSync(path.join(workDir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include }));
  writeFileSync(path.join(workDir, 'package.json'), JSON.stringify({ type: 'module' }));
  const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc');
  await run(process.execPath, [tsc, '-p', workDir], { cwd: workDir }).catch((error: { stdout?: string }) => {
    throw new Error(`tsc --strict failed on ${what}:\n${error.stdout ?? String(error)}`);
  });
}
