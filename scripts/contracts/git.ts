// Small read-only git helpers for the contract checks (rev lookup, `git show REV:path`).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

async function git(repoRoot: string, args: string[]): Promise<string | undefined> {
  try {
    const { stdout } = await run('git', args, { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch {
    return undefined;
  }
}

/** The commit `rev` names, or undefined. */
export async function resolveRev(repoRoot: string, rev: string): Promise<string | undefined> {
  return (await git(repoRoot, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`]))?.trim();
}

/** Whether `rev` names a commit in the repository at `repoRoot`. */
export async function revExists(repoRoot: string, rev: string): Promise<boolean> {
  return (await git(repoRoot, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`])) !== undefined;
}

/** The content of `file` (relative to the repo root) at `rev`, or undefined when it did not exist there. */
export async function showFile(repoRoot: string, rev: string, file: string): Promise<string | undefined> {
  return git(repoRoot, ['show', `${rev}:${file}`]);
}
