// `tsx bench/serve.ts`: the bench set-up left running (throwaway PostgreSQL, seeded product and baseline) for manual probing; Ctrl-C stops it.
import { benchPostgres, freshDatabase } from './postgres.js';
import { freePort, seed, startBaseline, startProduct } from './servers.js';

const postgres = await benchPostgres();
const database = await freshDatabase(postgres.adminUrl, `bench_serve_${Date.now()}`);
const product = await startProduct(database.url, Number(process.env.PRODUCT_PORT ?? (await freePort())));
await seed(database.url);
const baseline = await startBaseline(database.url, Number(process.env.BASELINE_PORT ?? (await freePort())));
console.log(JSON.stringify({ product: product.base, baseline: baseline.base, database: database.url, token: product.token, userId: product.userId }));
const stop = async () => {
  await product.stop();
  await baseline.stop();
  await database.drop();
  await postgres.stop();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
setInterval(() => {}, 1 << 30);
