// `pnpm bench:hostile` (after `pnpm build`): SPEC §0.2's budget, measured. One client address sends, at the default rate
// limits, the worst inputs issue 46 found (1 MB e-mails at forgot and login, new X-Client-Name and operation names, new
// and 1 MB GraphQL documents, resets for made-up addresses) for HOSTILE_MINUTES (default 10); another client reads a
// user meanwhile. Prints the server's RSS and the database's size before and after, against an idle period of the same
// server measured first, and the other client's p50/p99 idle and under attack (budget: +64 MB, +64 MB, ≤ 2×).
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { describeMachine } from './machine.js';
import { benchPostgres, freshDatabase } from './postgres.js';
import { freePort, startProduct } from './servers.js';
import { startSmtpSink } from './smtp-sink.js';

const MINUTES = Number(process.env.HOSTILE_MINUTES ?? 10);
const IDLE_SECONDS = Number(process.env.HOSTILE_IDLE_SECONDS ?? 60);
/** The default bucket: 1 000 requests a minute per client; the attacker stays just under it, as a patient one would. */
const HOSTILE_PER_SECOND = 16;
const HOSTILE = '198.51.100.7';
const OTHER = '192.0.2.1';
const MB = 'x'.repeat(1000 * 1024);

const smtp = await startSmtpSink();

const postgres = await benchPostgres();
const database = await freshDatabase(postgres.adminUrl, `bench_hostile_${Date.now()}`);
const product = await startProduct(database.url, await freePort(), [], undefined, undefined, {
  // The default limits (startProduct lifts the default bucket for the throughput benches).
  RATE_LIMIT_MAX: '1000',
  SMTP_URL: smtp.url,
  TRUST_PROXY: 'true',
  // The usage record flushed as in production (every 10 s).
  LOG_LEVEL: 'error',
});
const client = new pg.Client({ connectionString: database.url });
await client.connect();

const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${product.pid}/status`, 'utf8'))![1]) / 1024;
const databaseMb = async () => Number((await client.query('SELECT pg_database_size(current_database()) AS size')).rows[0].size) / 2 ** 20;
const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))] ?? NaN;

const request = (path: string, init: RequestInit & { from: string; headers?: Record<string, string> }) =>
  fetch(`${product.base}${path}`, { ...init, headers: { 'content-type': 'application/json', 'x-forwarded-for': init.from, ...init.headers } })
    .then(async (response) => (await response.arrayBuffer(), response.status))
    .catch(() => 0);

/** The other client: a read by id every 100 ms, its latencies kept. */
async function otherClient(until: () => boolean): Promise<number[]> {
  const latencies: number[] = [];
  while (!until()) {
    const started = performance.now();
    await request(`/api/v1/users/${product.userId}`, { from: OTHER, method: 'GET' });
    latencies.push(performance.now() - started);
    await sleep(100);
  }
  return latencies;
}

/** One hostile request of the mix, the n-th. */
function hostile(n: number): Promise<number> {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    request(path, { from: HOSTILE, method: 'POST', body: JSON.stringify(body), headers });
  switch (n % 8) {
    case 0:
      return post('/auth/password/forgot', { email: `${n}${MB}@example.com` });
    case 1:
      return post('/login', { email: `${n}${MB}@example.com`, password: 'x' });
    case 2:
      return post('/graphql', { query: `query Op${n} { users(first: 1) { id } }` }, { 'x-client-name': `client-${n}` });
    case 3:
      return post('/graphql', { query: `# ${n}${MB}\n{ __typename }` });
    case 4:
      return post('/auth/password/forgot', { email: `nobody-${n}@example.com` });
    case 5:
      return request(`/api/v1/users?page=${n % 50}&sort=name`, { from: HOSTILE, method: 'GET', headers: { 'x-client-name': `rest-${n}` } });
    case 6:
      return post('/graphql', { query: `query New${n} { posts(first: ${(n % 20) + 1}) { id title } }` }, { 'x-client-name': `c${n % 5000}` });
    default:
      return post('/login', { email: `made-up-${n}@example.com`, password: 'x' });
  }
}

try {
  console.log(describeMachine(postgres.version));
  let idleOver = false;
  const idleStart = { rss: rssMb(), db: await databaseMb() };
  const idleTimer = sleep(IDLE_SECONDS * 1000).then(() => (idleOver = true));
  const idleLatencies = await otherClient(() => idleOver);
  await idleTimer;
  const idleEnd = { rss: rssMb(), db: await databaseMb() };

  let attackOver = false;
  const statuses = new Map<number, number>();
  let sent = 0;
  let peakRss = rssMb();
  const attack = (async () => {
    const started = performance.now();
    while (!attackOver) {
      const due = Math.floor(((performance.now() - started) / 1000) * HOSTILE_PER_SECOND);
      const batch: Promise<number>[] = [];
      while (sent < due) batch.push(hostile(sent++));
      for (const status of await Promise.all(batch)) statuses.set(status, (statuses.get(status) ?? 0) + 1);
      peakRss = Math.max(peakRss, rssMb());
      await sleep(50);
    }
  })();
  const attackTimer = sleep(MINUTES * 60_000).then(() => (attackOver = true));
  const attackLatencies = await otherClient(() => attackOver);
  await attackTimer;
  await attack;
  await sleep(11_000); // the last usage flush
  const attackEnd = { rss: rssMb(), db: await databaseMb() };
  // What the attack left, once V8 has had a quiet moment to give back the heap its garbage grew (its memory reducer).
  await sleep(30_000);
  const settled = rssMb();
  const usageRows = Number((await client.query('SELECT count(*) AS n FROM contract_usage')).rows[0].n);
  const outboxRows = Number((await client.query('SELECT count(*) AS n FROM mail_outbox')).rows[0].n);

  const scale = (MINUTES * 60) / IDLE_SECONDS;
  const fmt = (value: number) => value.toFixed(1);
  console.log(`\nidle ${IDLE_SECONDS} s, then one address at ${HOSTILE_PER_SECOND} req/s for ${MINUTES} min (${sent} requests)`);
  console.log(`hostile answers: ${[...statuses].map(([status, count]) => `${status}×${count}`).join(', ')}; mail delivered ${smtp.delivered()}`);
  console.log(`| | idle (${IDLE_SECONDS} s) | hostile (${MINUTES} min) |`);
  console.log('|---|---:|---:|');
  console.log(
    `| RSS start → end (MB) | ${fmt(idleStart.rss)} → ${fmt(idleEnd.rss)} | ${fmt(idleEnd.rss)} → ${fmt(attackEnd.rss)} (peak ${fmt(peakRss)}) |`,
  );
  console.log(
    `| RSS growth (MB) | ${fmt(idleEnd.rss - idleStart.rss)} | ${fmt(attackEnd.rss - idleEnd.rss)} (30 s later: ${fmt(settled - idleEnd.rss)}) |`,
  );
  console.log(
    `| database growth (MB) | ${fmt(idleEnd.db - idleStart.db)} (×${fmt(scale)}: ${fmt((idleEnd.db - idleStart.db) * scale)}) | ${fmt(attackEnd.db - idleEnd.db)} |`,
  );
  console.log(
    `| other client p50 / p99 (ms) | ${fmt(quantile(idleLatencies, 0.5))} / ${fmt(quantile(idleLatencies, 0.99))} | ${fmt(quantile(attackLatencies, 0.5))} / ${fmt(quantile(attackLatencies, 0.99))} |`,
  );
  console.log(`contract_usage rows ${usageRows}, mail_outbox rows ${outboxRows}`);
} finally {
  await client.end();
  await product.stop();
  await database.drop();
  await postgres.stop();
  smtp.close();
}
