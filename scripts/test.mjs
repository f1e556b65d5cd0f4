// `pnpm test`: the whole suite in two runs of jest (two workers, then the latency-measuring suites alone); with arguments, one jest run with them.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
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

/** Runs jest on this Node with ESM enabled; returns its exit status. */
function runJest(args) {
  const { status, signal } = spawnSync(process.execPath, [...noJitPageProtection, '--experimental-vm-modules', jest, ...args], {
    cwd: root,
    stdio: 'inherit',
  });
  return signal ? 1 : (status ?? 1);
}

const args = process.argv.slice(2);
if (args.length > 0) process.exit(runJest(args)); // `pnpm test <path>`, `pnpm test -t <name>`: plain jest

for (const suite of suitesMeasuringLatency) {
  if (!existsSync(path.join(root, suite))) throw new Error(`jest.config.js names ${suite}, which does not exist`);
}
const escaped = suitesMeasuringLatency.map((suite) => suite.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));

// Most suites wait on a database, a socket or a child process for much of their time: two workers on two cores take
// ~40 % off the wall time. The latency-measuring ones then run alone, so that their bounds measure the product only.
const parallel = runJest(['--maxWorkers=2', '--testPathIgnorePatterns', '/node_modules/', ...escaped]);
console.log(`\n${'='.repeat(20)} alone: the ${suitesMeasuringLatency.length} suites that measure latency\n`);
const alone = runJest(['--runInBand', '--passWithNoTests', ...escaped]);
process.exit(parallel || alone);
