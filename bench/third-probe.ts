// `pnpm bench:probe` (after `pnpm build`): issue 31's items 2 and 8 measured again, each against a baseline in the same
// run, on the production build over a throwaway PostgreSQL.
// - Slow readers: 80 sockets ask for GraphiQL's script uncompressed (6 MB) and read nothing. The server's RSS and
//   another client's `GET /api/v1/users/1` latency (median) before, with the readers held, and once
//   HTTP_SEND_TIMEOUT_MS (here 2 s) has cut them off.
// - Hashing fairness: a login's latency (median of sequential logins) alone, then while an ADMIN batch of 100 users
//   with passwords runs.
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeMachine } from './machine.js';
import { benchPostgres, freshDatabase } from './postgres.js';
import { freePort, seed, startProduct } from './servers.js';

const READERS = 80;
const SEND_TIMEOUT_MS = 2_000;

const postgres = await benchPostgres();
const database = await freshDatabase(postgres.adminUrl, `bench_probe_${Date.now()}`);
const port = await freePort();
const product = await startProduct(database.url, port, [], undefined, undefined, {
  HTTP_SEND_TIMEOUT_MS: String(SEND_TIMEOUT_MS),
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: '1000',
  LOGIN_RATE_LIMIT_MAX: '100000',
  LOGIN_IP_RATE_LIMIT_MAX: '100000',
});
await seed(database.url);

const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${product.pid}/status`, 'utf8'))![1]) / 1024;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
async function timed(request: () => Promise<Response>): Promise<number> {
  const started = performance.now();
  await (await request()).arrayBuffer();
  return performance.now() - started;
}
const read = () => timed(() => fetch(`${product.base}/api/v1/users/1`));
const readMedian = async (n = 50) => {
  const latencies: number[] = [];
  for (let i = 0; i < n; i++) latencies.push(await read());
  return median(latencies);
};
const loginOnce = () =>
  timed(() =>
    fetch(`${product.base}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bench@example.com', password: 'bench-password' }),
    }),
  );

try {
  console.log(describeMachine(postgres.version));

  // Slow readers.
  const page = await (await fetch(`${product.base}/graphql`, { headers: { accept: 'text/html' } })).text();
  const script = /src="(\/graphiql\/[^"]+\/graphiql\.js)"/.exec(page)![1]!;
  await (await fetch(`${product.base}${script}`, { headers: { 'accept-encoding': 'identity' } })).arrayBuffer(); // loaded once
  const before = { rss: rssMb(), read: await readMedian() };
  const readers: Socket[] = [];
  for (let i = 0; i < READERS; i++) {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.pause();
    socket.write(`GET ${script} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n\r\n`);
    readers.push(socket);
  }
  await sleep(500);
  const held = { rss: rssMb(), read: await readMedian() };
  await sleep(SEND_TIMEOUT_MS + 1_500);
  const after = { rss: rssMb(), read: await readMedian() };
  for (const socket of readers) socket.destroy();
  console.log(`${READERS} readers of a 6 MB answer that read nothing (HTTP_SEND_TIMEOUT_MS=${SEND_TIMEOUT_MS}):`);
  console.log(`  before:              RSS ${before.rss.toFixed(0)} MB, another client's read median ${before.read.toFixed(2)} ms`);
  console.log(`  readers held:        RSS ${held.rss.toFixed(0)} MB, another client's read median ${held.read.toFixed(2)} ms`);
  console.log(`  after the timeout:   RSS ${after.rss.toFixed(0)} MB, another client's read median ${after.read.toFixed(2)} ms`);

  // Hashing fairness.
  const alone: number[] = [];
  for (let i = 0; i < 30; i++) alone.push(await loginOnce());
  const admin = (await (
    await fetch(`${product.base}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bench@example.com', password: 'bench-password' }),
    })
  ).json()) as { accessToken: string };
  const users = Array.from({ length: 100 }, (_, n) => ({
    name: `Batch ${n}`,
    email: `probe-batch-${n}@example.com`,
    password: `a probe passphrase ${n}`,
  }));
  let done = false;
  const batchStarted = performance.now();
  const batch = fetch(`${product.base}/api/v1/users/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${admin.accessToken}` },
    body: JSON.stringify({ users }),
  }).then(async (response) => {
    await response.arrayBuffer();
    done = true;
    return { status: response.status, ms: performance.now() - batchStarted };
  });
  const during: number[] = [];
  while (!done) during.push(await loginOnce());
  const batchResult = await batch;
  console.log(
    `logins alone and during an ADMIN batch of 100 users with passwords (answered ${batchResult.status} in ${batchResult.ms.toFixed(0)} ms):`,
  );
  console.log(`  alone:  median ${median(alone).toFixed(1)} ms over ${alone.length} logins`);
  console.log(`  during: median ${median(during).toFixed(1)} ms, worst ${Math.max(...during).toFixed(1)} ms over ${during.length} logins`);
} finally {
  await product.stop();
  await database.drop();
  await postgres.stop();
}
