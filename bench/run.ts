// `pnpm bench`: runs every benchmark scenario and prints the figures recorded in the README.
import os from 'node:os';
import { runScenario, startOnPostgres, type Scenario } from './scenarios/load.js';
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

  const seconds = Number(process.env.BENCH_SECONDS ?? 10);
  const target = await startOnPostgres(process.env.DATABASE_URL);
  const gql = (query: string, variables?: object) => ({ query, variables });
  const scenarios: Scenario[] = [
    { name: 'REST user by id', path: '/api/v1/users/2' },
    { name: 'REST users page (20)', path: '/api/v1/users?page=2&pageSize=20' },
    { name: 'GraphQL user by id', method: 'POST', path: '/graphql', body: gql('query($id: ID!) { user(id: $id) { id name email } }', { id: '2' }) },
    { name: 'GraphQL users→posts→author (100×5)', method: 'POST', path: '/graphql', body: gql('{ users { id posts { id title author { name } } } }') },
    // Writes last: the posts they add would otherwise grow what the read scenarios return.
    { name: 'REST create post', method: 'POST', path: `/api/v1/users/${target.userId}/posts`, auth: true, body: { title: 'bench', content: 'load' } },
    { name: 'GraphQL createPost', method: 'POST', path: '/graphql', auth: true, body: gql(`mutation { createPost(title: "bench", content: "load", authorId: ${target.userId}) { id } }`) },
  ];
  console.log(`\nthroughput on PostgreSQL: ${seconds} s per scenario, 20 connections`);
  console.log('  scenario                               req/s    p50 ms   p99 ms   non-2xx');
  try {
    for (const scenario of scenarios) {
      const f = await runScenario(target, scenario, seconds);
      console.log(`  ${f.name.padEnd(38)} ${String(f.requestsPerSecond).padStart(6)} ${String(f.p50).padStart(8)} ${String(f.p99).padStart(8)} ${String(f.non2xx).padStart(9)}`);
    }
  } finally {
    await target.stop();
  }
} else {
  console.log('\n(set DATABASE_URL to also measure start-up on PostgreSQL)');
}
