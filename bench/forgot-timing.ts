// `pnpm bench:forgot`: does `POST /auth/password/forgot` tell, by its timing, whether an address has an account?
// 200 requests for addresses with an account and 200 for unknown ones, interleaved, over one keep-alive connection to
// the product (from source, on a throwaway PostgreSQL, mail over SMTP to a sink in this process); prints both medians
// and their ratio (SPEC §3.2: the same within noise; issue 30 asks for medians within 10 %).
import { setTimeout as sleep } from 'node:timers/promises';
import { describeMachine } from './machine.js';
import { benchPostgres, freshDatabase } from './postgres.js';
import { freePort, startProduct } from './servers.js';
import { startSmtpSink } from './smtp-sink.js';

const SAMPLES = Number(process.env.FORGOT_SAMPLES ?? 200);

const smtp = await startSmtpSink();

const postgres = await benchPostgres();
const database = await freshDatabase(postgres.adminUrl, `bench_forgot_${Date.now()}`);
// Every sample comes from its own forwarded address and asks for its own e-mail: the per-address and per-e-mail
// buckets (which would answer 429 after 20 and 5) are not what is measured.
const product = await startProduct(database.url, await freePort(), [], undefined, undefined, {
  SMTP_URL: smtp.url,
  TRUST_PROXY: 'true',
  SIGNUP_RATE_LIMIT_MAX: '100000',
});

const address = (index: number) => `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`;
const post = (path: string, body: unknown, index: number) =>
  fetch(`${product.base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': address(index) },
    body: JSON.stringify(body),
  });

try {
  const existing: string[] = [];
  for (let index = 0; index < SAMPLES; index++) {
    const email = `holder-${index}@example.com`;
    const created = await post('/api/v1/users', { name: `Holder ${index}`, email, password: 'a bench passphrase' }, 100_000 + index);
    if (created.status !== 201) throw new Error(`sign-up: ${created.status} ${await created.text()}`);
    existing.push(email);
  }
  while (smtp.delivered() < SAMPLES) await sleep(50); // the sign-ups' verification mail, out of the way

  const timings: Record<'existing' | 'unknown', number[]> = { existing: [], unknown: [] };
  for (let index = 0; index < 2 * SAMPLES; index++) {
    const kind = index % 2 === 0 ? 'existing' : 'unknown';
    const email = kind === 'existing' ? existing[index >> 1]! : `nobody-${index}@example.com`;
    const started = process.hrtime.bigint();
    const response = await post('/auth/password/forgot', { email }, index);
    await response.arrayBuffer();
    timings[kind].push(Number(process.hrtime.bigint() - started) / 1e6);
    if (response.status !== 202) throw new Error(`forgot: ${response.status}`);
  }
  while (smtp.delivered() < 2 * SAMPLES) await sleep(50); // every reset mail left: the work behind the 202 was done

  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return (sorted[(sorted.length - 1) >> 1]! + sorted[sorted.length >> 1]!) / 2;
  };
  const known = median(timings.existing);
  const unknown = median(timings.unknown);
  console.log(describeMachine(postgres.version));
  console.log(`POST /auth/password/forgot, ${SAMPLES} interleaved samples each`);
  console.log(`  median, address with an account: ${known.toFixed(3)} ms`);
  console.log(`  median, unknown address:          ${unknown.toFixed(3)} ms`);
  console.log(`  ratio: ${(known / unknown).toFixed(3)} (within 10 %: ${Math.abs(known / unknown - 1) <= 0.1 ? 'yes' : 'NO'})`);
} finally {
  await product.stop();
  await database.drop();
  await postgres.stop();
  smtp.close();
}
