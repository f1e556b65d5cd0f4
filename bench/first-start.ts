// `pnpm bench:first-start`: a newcomer's first impression, measured as they meet it. A fresh clone of this checkout's
// HEAD, `pnpm install`, then `pnpm start` (the README's command: the build, a new data directory, its migrations) to
// a 200 from /readyz, then a second `pnpm start`. Time to ready of each, and the memory of every process of the
// command (the build's and the server's) at its highest, sampled every 20 ms. BENCH_NODES picks the Node versions.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeMachine } from './machine.js';
import { benchNodes } from './nodes.js';
import { freePort, repoRoot } from './servers.js';

/** Every descendant of `pid` (through /proc/<pid>/task/<tid>/children). */
function descendants(pid: number): number[] {
  const found: number[] = [];
  const visit = (parent: number) => {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${parent}/task`);
    } catch {
      return;
    }
    for (const task of tasks) {
      let children = '';
      try {
        children = readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const child of children.split(' ').filter(Boolean).map(Number)) {
        found.push(child);
        visit(child);
      }
    }
  };
  visit(pid);
  return found;
}

/** A process's resident memory now, and its command line, or undefined once it has ended. */
function processInfo(pid: number): { rssMb: number; command: string } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).slice(0, 3).join(' ');
    return { rssMb: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024, command };
  } catch {
    return undefined;
  }
}

interface StartFigures {
  readyMs: number;
  /** The highest RSS any single process of the command reached, and which. */
  peak: { rssMb: number; command: string };
  /** The server's RSS 3 s after ready. */
  idleRssMb: number;
}

/** `pnpm start` in `checkout` until /readyz answers; its figures; then SIGTERM to the whole command. */
async function pnpmStart(checkout: string, nodeDir: string, dataDir: string): Promise<StartFigures> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn('pnpm', ['start'], {
    cwd: checkout,
    detached: true, // its own process group: stopped as a whole
    env: { ...process.env, PATH: `${nodeDir}:${process.env.PATH}`, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let peak = { rssMb: 0, command: '' };
  let server: number | undefined;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`pnpm start exited with ${child.exitCode}`);
      for (const pid of descendants(child.pid!)) {
        const info = processInfo(pid);
        if (info && info.rssMb > peak.rssMb) peak = info;
        if (info?.command.includes('apps/api/dist/main.js') || info?.command.includes('scripts/start.mjs')) server = pid;
      }
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (response) => response.ok,
        () => false,
      );
      if (ready) break;
      if (performance.now() - started > 600_000) throw new Error('not ready within 10 minutes');
      await sleep(20);
    }
    const readyMs = Math.round(performance.now() - started);
    const deadline = performance.now() + 3_000;
    while (performance.now() < deadline) {
      for (const pid of descendants(child.pid!)) {
        const info = processInfo(pid);
        if (info && info.rssMb > peak.rssMb) peak = info;
      }
      await sleep(20);
    }
    const idleRssMb = server ? (processInfo(server)?.rssMb ?? 0) : 0;
    return { readyMs, peak: { rssMb: Math.round(peak.rssMb * 10) / 10, command: peak.command }, idleRssMb: Math.round(idleRssMb * 10) / 10 };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
  }
}

const run = (command: string, args: string[], cwd: string, nodeDir: string) =>
  execFileSync(command, args, { cwd, env: { ...process.env, PATH: `${nodeDir}:${process.env.PATH}` }, stdio: ['ignore', 'ignore', 'inherit'] });

const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot }).toString().trim();
console.log(`machine: ${describeMachine('no PostgreSQL (embedded PGlite)')}; checkout ${head} (a fresh clone of HEAD each time)`);
for (const node of benchNodes()) {
  const nodeDir = path.dirname(node.path);
  const work = mkdtempSync(path.join(os.tmpdir(), 'users-posts-first-start-'));
  try {
    const checkout = path.join(work, 'clone');
    run('git', ['-c', 'advice.detachedHead=false', 'clone', '--quiet', '--no-hardlinks', repoRoot, checkout], work, nodeDir);
    const installStarted = performance.now();
    run('pnpm', ['install', '--frozen-lockfile', '--prefer-offline', '--reporter=silent'], checkout, nodeDir);
    const installMs = Math.round(performance.now() - installStarted);
    const dataDir = path.join(work, 'data');
    const first = await pnpmStart(checkout, nodeDir, dataDir);
    const second = await pnpmStart(checkout, nodeDir, dataDir);
    console.log(`\nnode ${node.version}: pnpm install ${installMs} ms (from the local store)`);
    console.log(
      `  first pnpm start:  ready in ${first.readyMs} ms; peak RSS ${first.peak.rssMb} MB (${first.peak.command}); server idle ${first.idleRssMb} MB`,
    );
    console.log(
      `  second pnpm start: ready in ${second.readyMs} ms; peak RSS ${second.peak.rssMb} MB (${second.peak.command}); server idle ${second.idleRssMb} MB`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
