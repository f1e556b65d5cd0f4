// `pnpm bench`: start-up figures, then product vs raw-pg baseline throughput, SQL statements per request and
// subscription fan-out on PostgreSQL (a throwaway cluster unless DATABASE_URL is set). Always exits 0: it measures.
import { describeMachine } from './machine.js';
import { benchPostgres, freshDatabase, type BenchPostgres } from './postgres.js';
import { measureFanout } from './scenarios/fanout.js';
import { countedLoad, timedLoad } from './scenarios/load.js';
import { measurePostgresStartup, measureStartup } from './scenarios/startup.js';
import { throughputScenarios } from './scenarios/throughput.js';
import { freePort, seed, startBaseline, startProduct, type Product, type Server } from './servers.js';
import { StatementCounter } from './statements.js';
import { printTable, type ScenarioResult } from './table.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
/** Requests per statement count (all answered before the count is read). */
const COUNTED_REQUESTS = 200;
const subscribers = Number(process.env.BENCH_SUBSCRIBERS ?? 50);
const fanoutPosts = Number(process.env.BENCH_FANOUT_POSTS ?? 100);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function startupFigures(postgres: BenchPostgres): Promise<void> {
  const startup = await measureStartup();
  console.log('\nstartup (embedded PGlite, `pnpm start` command)');
  console.log(`  first start (new data dir, migrations applied): ${startup.firstStartMs} ms`);
  console.log(`  later starts (existing data dir), median of ${startup.laterStartsMs.length}: ${median(startup.laterStartsMs)} ms  [${startup.laterStartsMs.join(', ')}]`);
  console.log(`  idle RSS after ready + 3 s: ${startup.idleRssMb} MB`);

  const startupDb = await freshDatabase(postgres.adminUrl, `bench_startup_${Date.now()}`);
  const onPostgres = await measurePostgresStartup(startupDb.url).finally(() => startupDb.drop());
  console.log('\nstartup on PostgreSQL');
  console.log(`  start to ready: ${onPostgres.startMs} ms, idle RSS after ready + 3 s: ${onPostgres.idleRssMb} MB`);
}

const postgres = await benchPostgres();
console.log(`machine: ${describeMachine(postgres.version)}`);
console.log(`PostgreSQL: ${postgres.origin === 'throwaway' ? 'throwaway cluster (fsync=off, loopback)' : 'DATABASE_URL'}`);
console.log('load generator (autocannon) and servers share the same CPUs');

const cleanups: (() => Promise<void>)[] = [async () => postgres.stop()];
try {
  // BENCH_STARTUP=0 skips the start-up figures (quicker runs while working on throughput).
  if (process.env.BENCH_STARTUP !== '0') await startupFigures(postgres);

  const name = `bench_${Date.now()}`;
  const database = await freshDatabase(postgres.adminUrl, name);
  cleanups.unshift(() => database.drop());
  const product: Product = await startProduct(database.url, await freePort());
  cleanups.unshift(() => product.stop());
  await seed(database.url);
  const baseline: Server = await startBaseline(database.url, await freePort());
  cleanups.unshift(() => baseline.stop());
  const counter = await StatementCounter.open(postgres.adminUrl, name);
  if (counter) cleanups.unshift(() => counter.close());
  const statements = (work: () => Promise<number>) => (counter ? counter.per(work) : Promise.resolve(null));

  console.log(`\nthroughput: ${seconds} s per scenario and server, ${connections} connections, 100 users × 5 posts`);
  const results: ScenarioResult[] = [];
  for (const scenario of throughputScenarios(product)) {
    // The counted runs also warm both servers up (JIT, pools, prepared statements) before the timed runs.
    const productStatements = await statements(() => countedLoad(product.base, scenario.product, COUNTED_REQUESTS));
    const baselineStatements = await statements(() => countedLoad(baseline.base, scenario.baseline, COUNTED_REQUESTS));
    const probe = scenario.constantStatementsProbe;
    const probeStatements = probe ? await statements(() => countedLoad(product.base, probe, COUNTED_REQUESTS)) : undefined;
    const productLoad = await timedLoad(product.base, product.pid, scenario.product, seconds, connections);
    const baselineLoad = await timedLoad(baseline.base, baseline.pid, scenario.baseline, seconds, connections);
    const result = { name: scenario.name, product: productLoad, baseline: baselineLoad, productStatements, baselineStatements, target: scenario.target, probeStatements };
    results.push(result);
    console.log(
      `  ${scenario.name}: product ${productLoad.requestsPerSecond} req/s, ${productLoad.cpuUsPerRequest} µs CPU/req, ${productStatements ?? 'n/a'} SQL/req; ` +
        `baseline ${baselineLoad.requestsPerSecond} req/s, ${baselineLoad.cpuUsPerRequest} µs CPU/req, ${baselineStatements ?? 'n/a'} SQL/req`,
    );
  }

  console.log(`\nsubscription fan-out: ${subscribers} graphql-ws subscribers on postCreated, ${fanoutPosts} posts created one after another over REST`);
  const fanout = await measureFanout(product, subscribers, fanoutPosts, counter);
  console.log(
    `  send → receive p50 ${fanout.p50} ms, p99 ${fanout.p99} ms, max ${fanout.max} ms; events lost ${fanout.lost}${fanout.lost ? ' (MISSED: must be 0)' : ''}; ` +
      `SQL per created post ${fanout.statementsPerPost ?? 'n/a'}`,
  );

  console.log('\nresults (ratio = product req/s ÷ baseline req/s in this run)');
  printTable(results);
} finally {
  for (const cleanup of cleanups) await cleanup().catch((error: unknown) => console.warn(`cleanup: ${(error as Error).message}`));
}
