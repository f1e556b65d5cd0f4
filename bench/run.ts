// `pnpm bench`: start-up figures, then issue 11's table (each ratio the median of the per-round ratios) — the product against PostGraphile 5, Apollo Server 5 +
// DataLoader and the raw-pg baseline, interleaved — with SQL statements and CPU per request, the product on each
// BENCH_NODES version, and subscription fan-out, on PostgreSQL (a throwaway cluster unless DATABASE_URL is set).
// Always exits 0: it measures.
import { describeMachine } from './machine.js';
import { benchNodes, postgraphileNode } from './nodes.js';
import { benchPostgres, freshDatabase, type BenchPostgres } from './postgres.js';
import { measureFanout } from './scenarios/fanout.js';
import { countedLoad, loadGenerator, timedLoad, type LoadFigures, type RequestShape } from './scenarios/load.js';
import { measurePostgresStartup, measureStartup } from './scenarios/startup.js';
import { SERVER_KINDS, throughputScenarios, type ServerKind, type ThroughputScenario } from './scenarios/throughput.js';
import { freePort, seed, startBaseline, startPeer, startProduct, type Product, type Server } from './servers.js';
import { StatementCounter } from './statements.js';
import { printTable, type ScenarioResult, type StartupResult } from './table.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
/** Issue 11 measured with 32 connections. */
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
/** Timed runs per server and scenario, alternating the order of the servers; the better run is reported. */
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
/** Requests per statement count (all answered before the count is read). */
const COUNTED_REQUESTS = 200;
const subscribers = Number(process.env.BENCH_SUBSCRIBERS ?? 50);
const fanoutPosts = Number(process.env.BENCH_FANOUT_POSTS ?? 100);
/** BENCH_ONLY: comma-separated scenario names (bench/scenarios/throughput.ts), for short runs of one scenario. */
const only = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((name) => name.trim())) : null;

// Issue 11 compares production modes: the peers always run with NODE_ENV=production, the product too unless
// BENCH_NODE_ENV says otherwise (read by bench/servers.ts when it starts the product).
process.env.BENCH_NODE_ENV ??= 'production';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function startupFigures(postgres: BenchPostgres): Promise<StartupResult> {
  const startup = await measureStartup();
  console.log('\nstartup (embedded PGlite, `pnpm start` command)');
  console.log(`  first start (new data dir, migrations applied): ${startup.firstStartMs} ms`);
  console.log(
    `  later starts (existing data dir), median of ${startup.laterStartsMs.length}: ${median(startup.laterStartsMs)} ms  [${startup.laterStartsMs.join(', ')}]`,
  );
  console.log(
    `  idle RSS after ready + 3 s: ${startup.idleRssMb} MB (the first start's: ${startup.firstIdleRssMb} MB); peak RSS until then: ${startup.peakRssMb} MB`,
  );
  const alone = startup.databaseAlone;
  console.log('\nPGlite alone on the same data dir, on a main thread, no app (bench/baseline/embedded-database-alone.mjs): the floor');
  console.log(
    `  start to ready, median of ${alone.startsMs.length}: ${median(alone.startsMs)} ms  [${alone.startsMs.join(', ')}]; idle RSS after ready + 3 s: ${alone.idleRssMb} MB; peak RSS until then: ${alone.peakRssMb} MB`,
  );

  const startupDb = await freshDatabase(postgres.adminUrl, `bench_startup_${Date.now()}`);
  const onPostgres = await measurePostgresStartup(startupDb.url).finally(() => startupDb.drop());
  console.log('\nstartup on PostgreSQL');
  console.log(
    `  start to ready, median of ${onPostgres.startsMs.length}: ${median(onPostgres.startsMs)} ms  [${onPostgres.startsMs.join(', ')}]; idle RSS after ready + 3 s: ${onPostgres.idleRssMb} MB; peak RSS until then: ${onPostgres.peakRssMb} MB`,
  );
  return {
    coldStartMs: median(startup.laterStartsMs),
    idleRssMb: startup.idleRssMb,
    peakRssMb: startup.peakRssMb,
    postgresStartMs: median(onPostgres.startsMs),
    postgresIdleRssMb: onPostgres.idleRssMb,
    databaseAloneStartMs: median(alone.startsMs),
    databaseAloneIdleRssMb: alone.idleRssMb,
  };
}

/** One server taking part in a scenario: which column it fills, and on which Node version when it is a further product. */
interface Participant {
  kind: ServerKind;
  node?: string;
  server: Server;
  request: RequestShape;
}

const label = (p: Participant) => (p.node ? `${p.kind}@${p.node}` : p.kind);

/**
 * Timed runs of every participant, `rounds` times, the order reversed every other round: the better run of each, and
 * every round's figures (for the per-round ratios).
 */
async function interleaved(participants: Participant[]): Promise<{ best: Map<Participant, LoadFigures>; byRound: Map<Participant, LoadFigures>[] }> {
  const best = new Map<Participant, LoadFigures>();
  const byRound: Map<Participant, LoadFigures>[] = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 ? [...participants].reverse() : participants;
    const thisRound = new Map<Participant, LoadFigures>();
    byRound.push(thisRound);
    for (const participant of order) {
      const figures = await timedLoad(participant.server.base, participant.server.pid, participant.request, seconds, connections);
      thisRound.set(participant, figures);
      const previous = best.get(participant);
      if (!previous || figures.requestsPerSecond > previous.requestsPerSecond) best.set(participant, figures);
    }
  }
  return { best, byRound };
}

const nodes = benchNodes();
/** BENCH_NODE_ARGS: Node options for the product's process (e.g. `--max-semi-space-size=64`), for experiments. */
const productNodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const [firstNode, ...otherNodes] = nodes as [(typeof nodes)[0], ...typeof nodes];
const pglNode = postgraphileNode(firstNode);

const postgres = await benchPostgres();
console.log(`machine: ${describeMachine(postgres.version)}`);
console.log(`PostgreSQL: ${postgres.origin === 'throwaway' ? 'throwaway cluster (fsync=off, loopback)' : 'DATABASE_URL'}`);
console.log(
  `servers on node ${firstNode.version}${otherNodes.length ? `, the product also on ${otherNodes.map((n) => n.version).join(', ')}` : ''}` +
    (pglNode !== firstNode ? `; PostGraphile on ${pglNode.version} (it needs Node >= 22)` : ''),
);
console.log(`product mode: ${process.env.BENCH_NODE_ENV === 'production' ? 'production' : 'development'} (BENCH_NODE_ENV); peers: production`);
console.log(`load generator: ${loadGenerator}${loadGenerator === 'wrk' ? '' : ' (wrk not on PATH)'}, sharing the same CPUs as the servers`);

const cleanups: (() => Promise<void>)[] = [async () => postgres.stop()];
const started = <T extends Server>(server: T): T => {
  cleanups.unshift(() => server.stop());
  return server;
};
try {
  // BENCH_STARTUP=0 skips the start-up figures (quicker runs while working on throughput).
  const startup = process.env.BENCH_STARTUP !== '0' ? await startupFigures(postgres) : null;

  const name = `bench_${Date.now()}`;
  const database = await freshDatabase(postgres.adminUrl, name);
  cleanups.unshift(() => database.drop());
  const product: Product = started(await startProduct(database.url, await freePort(), productNodeArgs, undefined, firstNode.path));
  await seed(database.url);
  const others: Record<Exclude<ServerKind, 'product'>, Server> = {
    postgraphile: started(await startPeer('postgraphile', database.url, await freePort(), pglNode.path)),
    apollo: started(await startPeer('apollo', database.url, await freePort(), firstNode.path)),
    baseline: started(await startBaseline(database.url, await freePort(), firstNode.path)),
  };
  const furtherProducts: { node: string; server: Product }[] = [];
  for (const node of otherNodes)
    furtherProducts.push({
      node: node.version,
      server: started(await startProduct(database.url, await freePort(), productNodeArgs, undefined, node.path)),
    });
  const counter = await StatementCounter.open(postgres.adminUrl, name);
  if (counter) cleanups.unshift(() => counter.close());
  const statements = (work: () => Promise<number>) => (counter ? counter.per(work) : Promise.resolve(null));

  const scenarios = throughputScenarios(product).filter((scenario) => !only || only.has(scenario.name));
  console.log(`\nthroughput: ${seconds} s per run, ${rounds} interleaved rounds, ${connections} connections, 2,000 users × 10 posts`);
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) results.push(await runScenario(scenario, product, others, furtherProducts, statements));

  if (process.env.BENCH_FANOUT !== '0' && !only) {
    console.log(
      `\nsubscription fan-out: ${subscribers} graphql-ws subscribers on postCreated, ${fanoutPosts} posts created one after another over REST`,
    );
    const fanout = await measureFanout(product, subscribers, fanoutPosts, counter);
    console.log(
      `  send → receive p50 ${fanout.p50} ms, p99 ${fanout.p99} ms, max ${fanout.max} ms; events lost ${fanout.lost}${fanout.lost ? ' (MISSED: must be 0)' : ''}; ` +
        `SQL per created post ${fanout.statementsPerPost ?? 'n/a'}`,
    );
  }

  console.log(`\nresults (${loadGenerator}, ${connections} connections, node ${firstNode.version})\n`);
  printTable(results, startup, firstNode.version);
} finally {
  for (const cleanup of cleanups) await cleanup().catch((error: unknown) => console.warn(`cleanup: ${(error as Error).message}`));
}

async function runScenario(
  scenario: ThroughputScenario,
  product: Product,
  others: Record<Exclude<ServerKind, 'product'>, Server>,
  furtherProducts: { node: string; server: Product }[],
  statements: (work: () => Promise<number>) => Promise<number | null>,
): Promise<ScenarioResult> {
  const participants: Participant[] = [{ kind: 'product', server: product, request: scenario.product }];
  for (const kind of SERVER_KINDS) {
    const request = kind === 'product' ? undefined : scenario.others[kind];
    if (request && kind !== 'product') participants.push({ kind, server: others[kind], request });
  }
  // Each product process has its own login (production mode draws fresh secrets per process): its own token.
  for (const { node, server } of furtherProducts) {
    const own = throughputScenarios(server).find((candidate) => candidate.name === scenario.name)!;
    participants.push({ kind: 'product', node, server, request: own.product });
  }

  // The counted runs also warm every server up (JIT, pools, prepared statements) before the timed runs.
  const counted: ScenarioResult['statements'] = {};
  for (const participant of participants) {
    const count = await statements(() => countedLoad(participant.server.base, participant.request, COUNTED_REQUESTS));
    if (!participant.node) counted[participant.kind] = count;
  }
  const probe = scenario.constantStatementsProbe;
  const probeStatements = probe ? await statements(() => countedLoad(product.base, probe, COUNTED_REQUESTS)) : undefined;

  const { best, byRound } = await interleaved(participants);
  const roundRatios: ScenarioResult['roundRatios'] = {};
  const productParticipant = participants[0]!;
  for (const other of participants.slice(1).filter((p) => !p.node))
    roundRatios[other.kind] = byRound.map((round) => round.get(productParticipant)!.requestsPerSecond / round.get(other)!.requestsPerSecond);
  const result: ScenarioResult = { scenario, figures: {}, statements: counted, probeStatements, productOnNodes: [], roundRatios };
  for (const [participant, figures] of best) {
    if (participant.node) result.productOnNodes!.push({ node: participant.node, figures });
    else result.figures[participant.kind] = figures;
  }
  console.log(
    `  ${scenario.name}: ` +
      participants
        .map((p) => {
          const figures = best.get(p)!;
          const sql = p.node ? '' : `, ${counted[p.kind] ?? 'n/a'} SQL`;
          return `${label(p)} ${figures.requestsPerSecond} req/s, ${figures.cpuUsPerRequest} µs CPU${sql}`;
        })
        .join('; '),
  );
  const ratios = Object.entries(roundRatios).map(
    ([kind, values]) =>
      `÷ ${kind} ${values.map((value) => value.toFixed(2)).join(', ')} (median ${[...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!.toFixed(2)})`,
  );
  if (ratios.length) console.log(`    product's ratio per round: ${ratios.join('; ')}`);
  return result;
}
