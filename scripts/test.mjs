// `pnpm test`: the whole suite in two runs of jest (two workers, then the latency-measuring suites alone); with arguments, one jest run with them.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suitesMeasuringLatency } from '../jest.config.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const jest = path.join(root, 'node_modules/jest/bin/jest.js');

/**
 * V8's write protection of JIT code pages (PKU, on CPUs that have it, such as this machine's EPYC) aborts a process
 * that creates and closes many PGlite instances, as the test databases do: "Check failed:
 * jit_page_->allocations_.erase(addr) == 1", an upstream bug (nodejs/node#64500, seen here once on Node 24 in the
 * embedded database's suite). Turned off for the test processes only (jest's workers inherit the flag); the product
 * opens one PGlite per process and keeps the protection. Node 20 refuses the flag, hence the probe.
 */
const noJitPageProtection =
  spawnSync(process.execPath, ['--no-memory-protection-keys', '-e', '0']).status === 0 ? ['--no-memory-protection-keys'] : [];

/** Where the suites that need more than Node (test/support/requirements.ts) say why they skipped, a JSON line each. */
const skipsDir = mkdtempSync(path.join(os.tmpdir(), 'users-posts-test-skips-'));
const skipsFile = path.join(skipsDir, 'skips.jsonl');

/** Runs jest on this Node with ESM enabled; returns its exit status. */
function runJest(args) {
  const { status, signal } = spawnSync(process.execPath, [...noJitPageProtection, '--experimental-vm-modules', jest, ...args], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, TEST_SKIPS_FILE: skipsFile },
  });
  return signal ? 1 : (status ?? 1);
}

/** After jest's summary: each group of suites skipped for what the machine lacks, once, and how to run it. */
function reportSkips() {
  const lines = existsSync(skipsFile) ? readFileSync(skipsFile, 'utf8').trim().split('\n').filter(Boolean) : [];
  rmSync(skipsDir, { recursive: true, force: true });
  const groups = new Map(lines.map((line) => JSON.parse(line)).map((skip) => [skip.suites, skip]));
  for (const { suites, missing, howToRun } of groups.values()) {
    console.log(`skipped: ${suites}: this machine lacks ${missing.join('; ')}. To run them: ${howToRun}.`);
  }
}

/** Exits with `status` once the skips are reported. */
function finish(status) {
  reportSkips();
  process.exit(status);
}

const args = process.argv.slice(2);
if (args.length > 0) finish(runJest(args)); // `pnpm test <path>`, `pnpm test -t <name>`: plain jest

for (const suite of suitesMeasuringLatency) {
  if (!existsSync(path.join(root, suite))) throw new Error(`jest.config.js names ${suite}, which does not exist`);
}
const escaped = suitesMeasuringLatency.map((suite) => suite.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));

// Most suites wait on a database, a socket or a child process for much of their time: two workers on two cores take
// ~40 % off the wall time. The latency-measuring ones then run alone, so that their bounds measure the product only.
const parallel = runJest(['--maxWorkers=2', '--testPathIgnorePatterns', '/node_modules/', ...escaped]);
console.log(`\n${'='.repeat(20)} alone: the ${suitesMeasuringLatency.length} suites that measure latency\n`);
const alone = runJest(['--runInBand', '--passWithNoTests', ...escaped]);
finish(parallel || alone);
