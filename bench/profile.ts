// `pnpm bench:profile`: the cost budget per layer. The product and the raw-pg baseline under the four scenarios of the
// peer table, each load profiled over the inspector (no start-up in the window), the samples attributed to layers
// (bench/layers.ts), printed as CPU microseconds per request: the product's column beside the baseline's.
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pinToCpus, threadCpuMs } from './cpu.js';
import { describeMachine } from './machine.js';
import { GC, InspectorProfiler, LAYERS, layerCosts, NATIVE, OTHER, SOCKET_WRITES, type LayerCosts } from './layers.js';
import { benchPostgres, freshDatabase } from './postgres.js';
import { loadGenerator, timedLoad, type LoadFigures, type RequestShape } from './scenarios/load.js';
import { throughputScenarios } from './scenarios/throughput.js';
import { freePort, repoRoot, seed, startBaseline, startProduct, type Server } from './servers.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
/** Profiled runs per server and scenario; each layer's figure is the median of the rounds. */
const rounds = Number(process.env.PROFILE_ROUNDS ?? 3);
/** The scenarios of issue 42's table (bench/scenarios/throughput.ts names); PROFILE_SCENARIOS picks others. */
const wanted = (process.env.PROFILE_SCENARIOS ?? 'GraphQL user by id,GraphQL users→posts→author,REST user by id,REST users page (20)').split(',');
const profileDir = mkdtempSync(path.join(os.tmpdir(), 'users-posts-profile-'));
process.env.BENCH_NODE_ENV ??= 'production'; // as `pnpm bench` runs the product

/** The layers' rows, in LAYERS' order, then V8's own. */
const ROWS = [...LAYERS.map((layer) => layer.name), GC, NATIVE, OTHER, SOCKET_WRITES];
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

interface Measured {
  /** Per round: the load's figures and the sampled main-thread µs per request of each layer. */
  rounds: { figures: LoadFigures; perRequestUs: Map<string, number>; busyUs: number; threadsUs: Map<string, number> }[];
  unclaimed: Map<string, number>;
  /** µs per request of each function (self time), summed over the rounds then divided by their number. */
  functions: Map<string, number>;
}
/** PROFILE_TOP: how many of the product's costliest functions to print per scenario (0: none). */
const top = Number(process.env.PROFILE_TOP ?? 0);

async function profiled(
  profiler: InspectorProfiler,
  server: Server,
  request: RequestShape,
  file: string,
): Promise<Measured['rounds'][0] & { costs: LayerCosts }> {
  const threadsBefore = threadCpuMs(server.pid);
  const { result: figures, profile } = await profiler.during(() => timedLoad(server.base, server.pid, request, seconds, connections));
  const threadsAfter = threadCpuMs(server.pid);
  writeFileSync(path.join(profileDir, file), JSON.stringify(profile));
  const costs = layerCosts(profile);
  const perRequest = (ms: number) => (ms * 1000) / Math.max(1, figures.requests);
  const spent = (name: string) => {
    const after = threadsAfter.get(name) ?? { userMs: 0, systemMs: 0 };
    const before = threadsBefore.get(name) ?? { userMs: 0, systemMs: 0 };
    return { userUs: perRequest(after.userMs - before.userMs), systemUs: perRequest(after.systemMs - before.systemMs) };
  };
  const threadsUs = new Map([...threadsAfter.keys()].map((name) => [name, spent(name).userUs + spent(name).systemUs]));
  // The samples say where the main thread was every 250 µs of wall time while it was not idle; one that lands in a
  // socket write counts in full, whatever part of that time the CPU spent elsewhere (on loopback the write carries
  // the receiver's work). So the kernel's part of the main thread (its system time from /proc, nearly all socket
  // reads and writes: strace counts the same syscalls per request for the product and the baseline) is one row, and
  // its user time is divided among the layers by their shares of the samples outside the socket writes.
  const main = spent('main thread');
  const userSampledMs = costs.busyMs - (costs.byLayer.get(SOCKET_WRITES) ?? 0);
  const share = (ms: number) => (userSampledMs > 0 ? (ms / userSampledMs) * main.userUs : 0);
  const perRequestUs = new Map([...costs.byLayer].filter(([layer]) => layer !== SOCKET_WRITES).map(([layer, ms]) => [layer, share(ms)]));
  perRequestUs.set(SOCKET_WRITES, main.systemUs);
  return { figures, costs, busyUs: perRequest(costs.busyMs), threadsUs, perRequestUs };
}

// The servers under test on CPU 0, everything else (this process, hence the throwaway PostgreSQL and the load generator
// it starts) on the others: a sample of a server's main thread is then time it ran, not time it waited for a CPU.
// PROFILE_PIN=0 leaves the scheduler free.
const lastCpu = os.availableParallelism() - 1;
const pinned = process.env.PROFILE_PIN !== '0' && pinToCpus(process.pid, lastCpu > 1 ? `1-${lastCpu}` : '1');
const postgres = await benchPostgres();
console.log(`machine: ${describeMachine(postgres.version)}`);
console.log(pinned ? 'servers under test pinned to CPU 0; PostgreSQL, the load generator and this process to the others' : 'no CPU pinning');
console.log(
  `load: ${loadGenerator}, ${connections} connections, ${seconds} s per run, ${rounds} rounds; sampling every 250 µs; profiles in ${profileDir}`,
);
const results = new Map<string, { product: Measured; baseline: Measured }>();
try {
  const database = await freshDatabase(postgres.adminUrl, `bench_profile_${Date.now()}`);
  const productInspector = await freePort();
  const baselineInspector = await freePort();
  // PROFILE_ROOT: another checkout's product (a worktree of an earlier commit, for the before-and-after table).
  const product = await startProduct(
    database.url,
    await freePort(),
    [`--inspect=127.0.0.1:${productInspector}`],
    path.resolve(process.env.PROFILE_ROOT ?? repoRoot),
  );
  const baseline = await startBaseline(database.url, await freePort(), process.execPath, [`--inspect=127.0.0.1:${baselineInspector}`]);
  if (pinned) for (const server of [product, baseline]) pinToCpus(server.pid, '0');
  const profilers = { product: await InspectorProfiler.connect(productInspector), baseline: await InspectorProfiler.connect(baselineInspector) };
  try {
    await seed(database.url);
    for (const name of wanted) {
      const scenario = throughputScenarios(product).find((candidate) => candidate.name === name);
      if (!scenario) throw new Error(`no scenario named ${name}`);
      const participants = {
        product: { server: product, request: scenario.product },
        baseline: { server: baseline, request: scenario.others.baseline! },
      };
      const measured = {
        product: { rounds: [], unclaimed: new Map(), functions: new Map() },
        baseline: { rounds: [], unclaimed: new Map(), functions: new Map() },
      } as {
        product: Measured;
        baseline: Measured;
      };
      // JIT and pools warm, and V8's optimising compiles (its helper threads' CPU) done before the profiled runs.
      for (const kind of ['product', 'baseline'] as const)
        await timedLoad(participants[kind].server.base, participants[kind].server.pid, participants[kind].request, 3, connections);
      for (let round = 0; round < rounds; round++) {
        for (const kind of round % 2 ? (['baseline', 'product'] as const) : (['product', 'baseline'] as const)) {
          const { server, request } = participants[kind];
          const run = await profiled(profilers[kind], server, request, `${kind}-${name.replace(/\W+/g, '-')}-${round}.cpuprofile`);
          measured[kind].rounds.push(run);
          for (const [source, ms] of run.costs.unclaimed) measured[kind].unclaimed.set(source, (measured[kind].unclaimed.get(source) ?? 0) + ms);
          for (const [where, ms] of run.costs.byFunction)
            measured[kind].functions.set(
              where,
              (measured[kind].functions.get(where) ?? 0) + (ms * 1000) / Math.max(1, run.figures.requests) / rounds,
            );
          console.log(
            `  ${name} · ${kind} · round ${round + 1}: ${run.figures.requestsPerSecond} req/s, ${run.figures.cpuUsPerRequest} µs process CPU/req, ${Math.round(run.busyUs)} µs sampled`,
          );
        }
      }
      results.set(name, measured);
    }
  } finally {
    profilers.product.close();
    profilers.baseline.close();
    await product.stop();
    await baseline.stop();
    await database.drop();
  }
} finally {
  await postgres.stop();
}

const cell = (measured: Measured, pick: (round: Measured['rounds'][0]) => number) => Math.round(median(measured.rounds.map(pick)));
const columns = [...results.values()].flatMap((r) => [r.product, r.baseline]);
const row = (title: string, pick: (round: Measured['rounds'][0]) => number, bold = false) =>
  `| ${bold ? `**${title}**` : title} | ${columns.map((m) => (bold ? `**${cell(m, pick)}**` : cell(m, pick))).join(' | ')} |`;
const header = ['Layer (µs of CPU per request)', ...[...results.keys()].flatMap((name) => [`${name}: product`, 'raw pg'])];
const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i ? '---:' : '---')).join('|')}|`];
for (const layer of ROWS) lines.push(row(layer, (round) => round.perRequestUs.get(layer) ?? 0));
lines.push(row('main thread', (round) => round.threadsUs.get('main thread') ?? 0, true));
lines.push(row("V8's helper threads (parallel GC, compilers)", (round) => round.threadsUs.get('V8Worker') ?? 0));
lines.push(
  row('other threads', (round) =>
    [...round.threadsUs].filter(([name]) => name !== 'main thread' && name !== 'V8Worker').reduce((sum, [, us]) => sum + us, 0),
  ),
);
lines.push(row('process CPU (/proc, all threads)', (round) => round.figures.cpuUsPerRequest, true));
lines.push(row('req/s under the profiler', (round) => round.figures.requestsPerSecond));
console.log(`\nmedian of ${rounds} rounds per cell\n\n${lines.join('\n')}`);

if (top > 0)
  for (const [name, measured] of results)
    for (const kind of ['product', 'baseline'] as const) {
      console.log(`\n${name}: the ${kind}'s ${top} costliest functions (self time: µs of samples per request, wall time while busy, unscaled)`);
      for (const [where, us] of [...measured[kind].functions].sort((a, b) => b[1] - a[1]).slice(0, top))
        console.log(`  ${us.toFixed(1).padStart(6)}  ${where}`);
    }

const unclaimed = [...results.values()].flatMap((r) => [...r.product.unclaimed]).sort((a, b) => b[1] - a[1]);
if (unclaimed.length) {
  console.log(`\nthe product's sources no layer claims ("${OTHER}"), sampled ms over every run:`);
  for (const [source, ms] of unclaimed.slice(0, 15)) console.log(`  ${Math.round(ms).toString().padStart(6)} ms  ${source}`);
}
