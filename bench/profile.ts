// `pnpm bench:profile`: the product under `node --cpu-prof` through the REST-by-id and GraphQL-by-id loads, then a
// summary of where its main thread spent the time. The .cpuprofile stays in the printed directory (open it in DevTools).
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { printSummary, summarise } from './cpuprofile.js';
import { benchPostgres, freshDatabase } from './postgres.js';
import { countedLoad, timedLoad } from './scenarios/load.js';
import { throughputScenarios } from './scenarios/throughput.js';
import { freePort, seed, startProduct } from './servers.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const profileDir = mkdtempSync(path.join(os.tmpdir(), 'users-posts-profile-'));

const postgres = await benchPostgres();
try {
  const name = `bench_profile_${Date.now()}`;
  const database = await freshDatabase(postgres.adminUrl, name);
  try {
    const product = await startProduct(database.url, await freePort(), ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]);
    try {
      await seed(database.url);
      // PROFILE_SCENARIOS: other scenario names, comma-separated (e.g. 'GraphQL users→posts→author').
      const wanted = new Set((process.env.PROFILE_SCENARIOS ?? 'REST user by id,GraphQL user by id').split(','));
      for (const scenario of throughputScenarios(product).filter((s) => wanted.has(s.name))) {
        await countedLoad(product.base, scenario.product, 200);
        const figures = await timedLoad(product.base, product.pid, scenario.product, seconds, connections);
        console.log(
          `${scenario.name}: ${figures.requestsPerSecond} req/s, ${figures.cpuUsPerRequest} µs CPU/req (profiler included), p50 ${figures.p50} ms, p99 ${figures.p99} ms`,
        );
      }
    } finally {
      await product.stop(); // the profile is written when the process exits
    }
  } finally {
    await database.drop();
  }
} finally {
  await postgres.stop();
}

const file = readdirSync(profileDir).find((entry) => entry.endsWith('.cpuprofile'));
if (!file) throw new Error(`no .cpuprofile in ${profileDir}`);
console.log(`\nprofile: ${path.join(profileDir, file)} (includes start-up; the load dominates)\n`);
printSummary(summarise(JSON.parse(readFileSync(path.join(profileDir, file), 'utf8'))), Number(process.env.PROFILE_TOP ?? 30));
