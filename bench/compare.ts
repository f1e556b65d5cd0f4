// Before/after of a change: the product of two checkouts (e.g. `git worktree add /tmp/before <rev>`), run in turn on
// the same PostgreSQL, for server CPU per request and req/s. Run: tsx bench/compare.ts /tmp/before /tmp/after
// The same checkout may be given twice with different settings: COMPARE_ENV_<n> (n from 1, the argument's position)
// adds variables to that product's environment, e.g. COMPARE_ENV_2='OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318'.
import path from 'node:path';
import { cpuPerRequest } from './cpu.js';
import { benchPostgres, freshDatabase } from './postgres.js';
import { countedLoad, timedLoad } from './scenarios/load.js';
import { throughputScenarios } from './scenarios/throughput.js';
import { freePort, seed, startProduct } from './servers.js';

const roots = process.argv.slice(2).map((root) => path.resolve(root));
/** COMPARE_ENV_<n> as variables: `KEY=value KEY2=value`. */
const envOf = (index: number): Record<string, string> =>
  Object.fromEntries(
    (process.env[`COMPARE_ENV_${index + 1}`] ?? '')
      .split(/\s+/)
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
const labelOf = (index: number) => `${roots[index]}${process.env[`COMPARE_ENV_${index + 1}`] ? ` (${process.env[`COMPARE_ENV_${index + 1}`]})` : ''}`;
if (roots.length < 2) throw new Error('usage: tsx bench/compare.ts CHECKOUT_A CHECKOUT_B [...]');
const rounds = Number(process.env.COMPARE_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const wanted = new Set((process.env.PROFILE_SCENARIOS ?? 'REST user by id,GraphQL user by id').split(','));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const figures = new Map<string, { cpu: number[]; rps: number[] }>();
const postgres = await benchPostgres();
try {
  // Rounds alternate the checkouts so that drifting load on the machine falls on both alike.
  for (let round = 1; round <= rounds; round++) {
    for (const [index, root] of roots.entries()) {
      const database = await freshDatabase(postgres.adminUrl, `bench_compare_${Date.now()}`);
      const product = await startProduct(database.url, await freePort(), [], root, process.execPath, envOf(index));
      try {
        await seed(database.url);
        for (const scenario of throughputScenarios(product).filter((s) => wanted.has(s.name))) {
          await countedLoad(product.base, scenario.product, 500, 20); // warm-up
          const { cpuUs } = await cpuPerRequest(product.pid, () => countedLoad(product.base, scenario.product, 3000, 20));
          const { requestsPerSecond } = await timedLoad(product.base, product.pid, scenario.product, seconds, 20);
          const key = `${scenario.name} | ${labelOf(index)}`;
          const entry = figures.get(key) ?? { cpu: [], rps: [] };
          entry.cpu.push(cpuUs);
          entry.rps.push(requestsPerSecond);
          figures.set(key, entry);
          console.log(`round ${round}  ${key}: ${cpuUs} µs CPU/req, ${requestsPerSecond} req/s`);
        }
      } finally {
        await product.stop();
        await database.drop();
      }
    }
  }
} finally {
  await postgres.stop();
}
console.log('\nmedians over the rounds:');
for (const [key, { cpu, rps }] of figures)
  console.log(`  ${key}: ${median(cpu)} µs CPU/req [${cpu.join(', ')}], ${median(rps)} req/s [${rps.join(', ')}]`);
