// The results of `pnpm bench`: issue 11's table (req/s of the product, the two peers and the raw-pg baseline, the ratio
// against each row's target, ✓/✗), the per-server details (latency, CPU and SQL statements per request), the start-up
// targets and, with BENCH_NODES, the product on one Node version against another.
import type { LoadFigures } from './scenarios/load.js';
import { SERVER_KINDS, SERVER_TITLES, type ServerKind, type ThroughputScenario } from './scenarios/throughput.js';

export interface ScenarioResult {
  scenario: ThroughputScenario;
  /** The better of the interleaved rounds, per server that answers the scenario. */
  figures: Partial<Record<ServerKind, LoadFigures>>;
  statements: Partial<Record<ServerKind, number | null>>;
  /** Statements of the same operation on a smaller data set (must equal the product's), when probed. */
  probeStatements?: number | null | undefined;
  /** The product on the further BENCH_NODES versions (the first version's figures are `figures.product`). */
  productOnNodes?: { node: string; figures: LoadFigures }[];
  /** Per interleaved round, the product's req/s ÷ each other server's in that same round. */
  roundRatios?: Partial<Record<ServerKind, number[]>>;
}

export interface StartupResult {
  coldStartMs: number;
  idleRssMb: number;
  /** Embedded, until ready + 3 s: no target, but what a container's limit must hold (it was 760 MB: schema-engine-bridge/src/webassembly-tier.js). */
  peakRssMb: number;
  postgresStartMs?: number;
  postgresIdleRssMb?: number;
  /** The floor: PGlite alone on the same directory, no app (bench/baseline/embedded-database-alone.mjs). */
  databaseAloneStartMs?: number;
  databaseAloneIdleRssMb?: number;
}

export interface Verdict {
  ratio: number | null;
  pass: boolean | null;
  notes: string[];
}

const round2 = (value: number) => Math.round(value * 100) / 100;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const mark = (pass: boolean | null) => (pass === null ? '–' : pass ? '✓' : '✗');

export function verdict(result: ScenarioResult): Verdict {
  const { scenario, figures, statements } = result;
  const notes: string[] = [];
  const product = figures.product;
  if (!scenario.target || !product) return { ratio: null, pass: null, notes };
  const against = figures[scenario.target.against];
  // The median of the per-round ratios (issue 42): each round's servers ran side by side, so a ratio is taken within
  // a round, and the median leaves out a round the shared machine disturbed. The better runs' ratio without rounds.
  const perRound = result.roundRatios?.[scenario.target.against];
  const ratio = perRound?.length ? round2(median(perRound)) : against ? round2(product.requestsPerSecond / against.requestsPerSecond) : null;
  let pass = ratio !== null && ratio >= scenario.target.ratio;
  if (scenario.maxStatements !== undefined) {
    const count = statements.product;
    const ok = count !== null && count !== undefined && count <= scenario.maxStatements;
    notes.push(`product SQL/request ${count ?? 'n/a'} (target ≤ ${scenario.maxStatements}) ${mark(ok)}`);
    pass &&= ok;
  }
  if (result.probeStatements !== undefined) {
    const constant = result.probeStatements !== null && result.probeStatements === statements.product;
    notes.push(`statements ${constant ? '' : 'NOT '}constant (${result.probeStatements ?? 'n/a'} for 10 users) ${mark(constant)}`);
    pass &&= constant;
  }
  const failures = SERVER_KINDS.filter((kind) => figures[kind]?.failures).map((kind) => `${kind} ${figures[kind]!.failures}`);
  if (failures.length) notes.push(`failed requests: ${failures.join(', ')}`);
  return { ratio, pass, notes };
}

const fmt = (value: number | null | undefined) =>
  value === null || value === undefined || Number.isNaN(value) ? 'n/a' : value.toLocaleString('en-US');

function printMarkdown(header: string[], rows: string[][], rightFrom = 1): void {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    '| ' + cells.map((cell, i) => (i < rightFrom ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ') + ' |';
  console.log(line(header));
  console.log('|' + widths.map((width, i) => (i < rightFrom ? '-'.repeat(width + 2) : '-'.repeat(width + 1) + ':')).join('|') + '|');
  for (const row of rows) console.log(line(row));
}

/** Issue 11's table: req/s per server, the ratio against the row's target, ✓/✗. */
function printIssueTable(results: ScenarioResult[]): void {
  const header = ['Request', ...SERVER_KINDS.map((kind) => SERVER_TITLES[kind]), 'ratio', 'target', ''];
  const rows = results.map((result) => {
    const v = verdict(result);
    const target = result.scenario.target;
    return [
      result.scenario.title,
      ...SERVER_KINDS.map((kind) => (result.figures[kind] ? fmt(result.figures[kind]!.requestsPerSecond) : '–')),
      v.ratio === null ? '–' : `${v.ratio.toFixed(2)} (÷ ${target!.against})`,
      target ? `≥ ${target.ratio.toFixed(1)}${result.scenario.maxStatements !== undefined ? `, ≤ ${result.scenario.maxStatements} SQL` : ''}` : '–',
      mark(v.pass),
    ];
  });
  printMarkdown(header, rows);
}

/** Latency, CPU and statements per request of every server in every scenario. */
function printDetails(results: ScenarioResult[]): void {
  const header = ['scenario', 'server', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'SQL/req', 'failed'];
  const rows: string[][] = [];
  for (const result of results) {
    for (const kind of SERVER_KINDS) {
      const figures = result.figures[kind];
      if (!figures) continue;
      rows.push([
        result.scenario.name,
        kind,
        fmt(figures.requestsPerSecond),
        fmt(figures.p50),
        fmt(figures.p99),
        fmt(figures.cpuUsPerRequest),
        fmt(result.statements[kind]),
        fmt(figures.failures),
      ]);
    }
  }
  printMarkdown(header, rows, 2);
}

function printStartup(startup: StartupResult): void {
  const rows = [
    ['Idle RSS (`pnpm start`, embedded PGlite, ready + 3 s)', `${startup.idleRssMb} MB`, '≤ 150 MB', mark(startup.idleRssMb <= 150)],
    ['Peak RSS (embedded PGlite, until ready + 3 s)', `${startup.peakRssMb} MB`, '–', ''],
    ['Cold start to ready (existing data dir, median)', `${startup.coldStartMs} ms`, '≤ 1 000 ms', mark(startup.coldStartMs <= 1000)],
  ];
  if (startup.postgresIdleRssMb !== undefined)
    rows.push(['Idle RSS on PostgreSQL', `${startup.postgresIdleRssMb} MB`, '≤ 150 MB', mark(startup.postgresIdleRssMb <= 150)]);
  if (startup.postgresStartMs !== undefined)
    rows.push(['Start to ready on PostgreSQL (median)', `${startup.postgresStartMs} ms`, '≤ 1 000 ms', mark(startup.postgresStartMs <= 1000)]);
  // No target: what Node and PGlite cost before any app, the floor under the two embedded rows above.
  if (startup.databaseAloneIdleRssMb !== undefined)
    rows.push(['Floor: idle RSS of PGlite alone (no app, its main thread)', `${startup.databaseAloneIdleRssMb} MB`, '–', '']);
  if (startup.databaseAloneStartMs !== undefined)
    rows.push(['Floor: start to ready of PGlite alone (median)', `${startup.databaseAloneStartMs} ms`, '–', '']);
  printMarkdown(['Start-up', 'measured', 'target', ''], rows, 1);
}

/** product on the first BENCH_NODES version ÷ product on each further one, per scenario (req/s and CPU). */
function printNodes(results: ScenarioResult[], firstNode: string): void {
  for (const result of results) {
    const first = result.figures.product;
    for (const other of result.productOnNodes ?? []) {
      if (!first) continue;
      console.log(
        `  ${result.scenario.name}: product on ${firstNode} ÷ on ${other.node}: ${round2(first.requestsPerSecond / other.figures.requestsPerSecond)}× req/s ` +
          `(${fmt(first.requestsPerSecond)} vs ${fmt(other.figures.requestsPerSecond)}), CPU µs/req ${fmt(first.cpuUsPerRequest)} vs ${fmt(other.figures.cpuUsPerRequest)}`,
      );
    }
  }
}

export function printTable(results: ScenarioResult[], startup: StartupResult | null, firstNode: string): void {
  printIssueTable(results);
  console.log('\n  PostGraphile answers the same reads under its own names (userByRowId(rowId), allUsers(first: 50).nodes,');
  console.log('  postsByAuthorId.nodes, userByAuthorId; ids as numbers), see bench/scenarios/throughput.ts.');
  for (const result of results) for (const note of verdict(result).notes) console.log(`  ${result.scenario.name}: ${note}`);
  console.log('\ndetails (the better of the interleaved rounds; CPU = the server process, SQL = statements PostgreSQL ran per request)');
  printDetails(results);
  if (startup) {
    console.log('');
    printStartup(startup);
  }
  if (results.some((result) => result.productOnNodes?.length)) {
    console.log('\nNode versions (BENCH_NODES; peers and baseline on the first):');
    printNodes(results, firstNode);
  }
  const missed = results.filter((result) => verdict(result).pass === false).map((result) => result.scenario.name);
  if (startup && startup.idleRssMb > 150) missed.push('embedded idle RSS');
  if (startup && startup.coldStartMs > 1000) missed.push('embedded cold start');
  if (startup?.postgresIdleRssMb !== undefined && startup.postgresIdleRssMb > 150) missed.push('idle RSS on PostgreSQL');
  if (startup?.postgresStartMs !== undefined && startup.postgresStartMs > 1000) missed.push('start on PostgreSQL');
  console.log(missed.length ? `\n  targets missed: ${missed.join(', ')}` : '\n  every target met');
  if (startup?.databaseAloneIdleRssMb !== undefined && startup.databaseAloneStartMs !== undefined)
    console.log(
      `  the embedded targets leave the app ${Math.round((150 - startup.databaseAloneIdleRssMb) * 10) / 10} MB and ${1000 - startup.databaseAloneStartMs} ms ` +
        `over PGlite alone (${startup.databaseAloneIdleRssMb} MB, ${startup.databaseAloneStartMs} ms); on PostgreSQL the app idles at ${startup.postgresIdleRssMb ?? 'n/a'} MB ` +
        `and starts in ${startup.postgresStartMs ?? 'n/a'} ms`,
    );
}
