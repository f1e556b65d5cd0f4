// `pnpm bench`: runs every benchmark scenario and prints the figures recorded in the README.
import os from 'node:os';
import { measurePostgresStartup, measureStartup } from './scenarios/startup.js';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`);

const startup = await measureStartup();
console.log('\nstartup (embedded PGlite, `pnpm start` command)');
console.log(`  first start (new data dir, migrations applied): ${startup.firstStartMs} ms`);
console.log(`  later starts (existing data dir), median of ${startup.laterStartsMs.length}: ${median(startup.laterStartsMs)} ms  [${startup.laterStartsMs.join(', ')}]`);
console.log(`  idle RSS after ready + 3 s: ${startup.idleRssMb} MB`);

if (process.env.DATABASE_URL) {
  const postgres = await measurePostgresStartup(process.env.DATABASE_URL);
  console.log('\nstartup on PostgreSQL (DATABASE_URL)');
  console.log(`  start to ready: ${postgres.startMs} ms, idle RSS after ready + 3 s: ${postgres.idleRssMb} MB`);
} else {
  console.log('\n(set DATABASE_URL to also measure start-up on PostgreSQL)');
}
