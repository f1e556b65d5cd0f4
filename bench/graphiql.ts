// `pnpm bench:graphiql`: what anonymous GraphiQL visitors cost another client (issue 31, item 1). Against the product
// (production mode, throwaway PostgreSQL): another client's `GET /api/v1/users/1`, one at a time for BENCH_SECONDS,
// first alone (the baseline), then while 4 anonymous "browsers" without a cache fetch the GraphiQL page and every asset
// it names (brotli accepted) as fast as they can. Prints both medians, their ratio, and the bytes of one visit.
import { setTimeout as sleep } from 'node:timers/promises';
import { describeMachine } from './machine.js';
import { benchPostgres, freshDatabase } from './postgres.js';
import { freePort, seed, startProduct } from './servers.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const FETCHERS = 4;

const postgres = await benchPostgres();
const database = await freshDatabase(postgres.adminUrl, `bench_graphiql_${Date.now()}`);
// The production build as the bench runs it (`pnpm build` first: bench/servers.ts starts apps/api/dist/main.js).
const product = await startProduct(database.url, await freePort());
await seed(database.url);

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

/** Another client's reads, one after the other, until `until`: their latencies (ms). */
async function victim(until: number): Promise<number[]> {
  const latencies: number[] = [];
  while (Date.now() < until) {
    const started = performance.now();
    const response = await fetch(`${product.base}/api/v1/users/1`);
    await response.arrayBuffer();
    latencies.push(performance.now() - started);
  }
  return latencies;
}

/** One visit of a browser with an empty cache: the page, then every asset it names; the bytes received. */
async function visit(): Promise<number> {
  const page = await fetch(`${product.base}/graphql`, { headers: { accept: 'text/html', 'accept-encoding': 'br' } });
  const html = await page.text();
  let bytes = Buffer.byteLength(html);
  const assets = [...html.matchAll(/(?:src|href)="(\/graphiql\/[^"]+)"/g)].map((match) => match[1]!);
  for (const asset of assets) {
    // Node's fetch decodes brotli itself: the bytes on the wire are the content-length of the compressed answer.
    const response = await fetch(`${product.base}${asset}`, { headers: { 'accept-encoding': 'br' } });
    bytes += Number(response.headers.get('content-length') ?? 0);
    await response.arrayBuffer();
  }
  return bytes;
}

try {
  const firstVisit = await visit(); // the assets compressed once, before the measurement
  const alone = await victim(Date.now() + SECONDS * 1000);
  let stop = false;
  let visits = 0;
  const fetchers = Array.from({ length: FETCHERS }, async () => {
    while (!stop) {
      await visit();
      visits++;
    }
  });
  await sleep(200);
  const loaded = await victim(Date.now() + SECONDS * 1000);
  stop = true;
  await Promise.all(fetchers);

  console.log(describeMachine(postgres.version));
  console.log(`GraphiQL visitors against another client's GET /api/v1/users/1 (${SECONDS} s each, production mode)`);
  console.log(`  one visit (page + assets, brotli): ${(firstVisit / 1024).toFixed(0)} KiB`);
  console.log(`  other client alone:           median ${median(alone).toFixed(2)} ms over ${alone.length} reads`);
  console.log(
    `  with ${FETCHERS} GraphiQL fetchers:   median ${median(loaded).toFixed(2)} ms over ${loaded.length} reads (${visits} visits meanwhile)`,
  );
  console.log(`  ratio: ${(median(loaded) / median(alone)).toFixed(2)}`);
} finally {
  await product.stop();
  await database.drop();
  await postgres.stop();
}
