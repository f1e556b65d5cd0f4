// The results table of `pnpm bench`: product vs raw-pg baseline per scenario, ratio against its target, statements/request.
import type { LoadFigures } from './scenarios/load.js';

export interface ScenarioResult {
  name: string;
  product: LoadFigures;
  baseline: LoadFigures;
  productStatements: number | null;
  baselineStatements: number | null;
  target?: number | undefined;
  /** Statements of the same operation on a smaller data set (must equal productStatements), when probed. */
  probeStatements?: number | null | undefined;
}

export interface Verdict {
  ratio: number;
  pass: boolean | null;
  note: string;
}

export function verdict(result: ScenarioResult): Verdict {
  const ratio = Math.round((result.product.requestsPerSecond / result.baseline.requestsPerSecond) * 100) / 100;
  if (result.target === undefined) return { ratio, pass: null, note: '' };
  const notes: string[] = [];
  let pass = ratio >= result.target;
  if (!pass) notes.push(`ratio ${ratio} < ${result.target}`);
  if (result.probeStatements !== undefined) {
    const constant = result.probeStatements !== null && result.probeStatements === result.productStatements;
    notes.push(constant ? `statements constant (${result.probeStatements} for 10 users)` : `statements NOT constant (${result.probeStatements} for 10 users)`);
    pass &&= constant;
  }
  if (result.product.failures || result.baseline.failures) notes.push(`failures: product ${result.product.failures}, baseline ${result.baseline.failures}`);
  return { ratio, pass, note: notes.join('; ') };
}

const fmt = (value: number | null | undefined) => (value === null || value === undefined || Number.isNaN(value) ? 'n/a' : String(value));

export function printTable(results: ScenarioResult[]): void {
  const header = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'SQL/req', 'base req/s', 'base p50', 'base p99', 'base CPU µs', 'base SQL', 'ratio', 'CPU ratio', 'target', 'result'];
  const rows = results.map((result) => {
    const v = verdict(result);
    return [
      result.name,
      fmt(result.product.requestsPerSecond),
      fmt(result.product.p50),
      fmt(result.product.p99),
      fmt(result.product.cpuUsPerRequest),
      fmt(result.productStatements),
      fmt(result.baseline.requestsPerSecond),
      fmt(result.baseline.p50),
      fmt(result.baseline.p99),
      fmt(result.baseline.cpuUsPerRequest),
      fmt(result.baselineStatements),
      fmt(v.ratio),
      fmt(Math.round((result.baseline.cpuUsPerRequest / result.product.cpuUsPerRequest) * 100) / 100),
      result.target === undefined ? '–' : `≥ ${result.target}`,
      v.pass === null ? '–' : v.pass ? 'pass' : 'MISSED',
    ];
  });
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => '  ' + cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  console.log(line(header));
  for (const row of rows) console.log(line(row));

  const missed = results.filter((result) => verdict(result).pass === false);
  for (const result of results) {
    const v = verdict(result);
    if (v.note) console.log(`  ${v.pass === false ? 'MISSED' : 'note'}: ${result.name}: ${v.note}`);
  }
  console.log('\n  ratio = product req/s ÷ baseline req/s (the targets); CPU ratio = baseline CPU µs/req ÷ product CPU µs/req');
  console.log(missed.length ? `\n  targets missed: ${missed.map((result) => result.name).join(', ')}` : '\n  every ratio target met');
}
