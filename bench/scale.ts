// `pnpm bench:scale`: every listing, sort, filter, search, deep page, cursor walk and GraphQL count of the contract on a
// big database and a small one, interleaved, as big ÷ small latency ratios (issue 32, SPEC §4 "At scale").
//
// PostgreSQL (default): 1,000,000 users × 10 posts against 2,000 × 10, in a cluster kept between runs under
// ~/.cache/users-posts/bench-scale (/var/tmp/users-posts-bench-scale as root; or on DATABASE_URL's server); seeded once (minutes), again only when the
// migrations change. `--embedded`: the same on PGlite data directories, 100,000 users against 2,000.
// SCALE_USERS, SCALE_SAMPLES (default 30) change the size and the samples per request.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { applyMigrations } from '@users-posts/db';
import { PGLITE_EXTENSIONS } from '@users-posts/schema-engine-bridge/pglite-extensions';
import pg from 'pg';
import { describeMachine } from './machine.js';
import { benchPostgres } from './postgres.js';
import { seedScale, seedStamp, seededStamp, type Query, type ScaleSize, type SeedReport } from './scale-seed.js';
import { freePort, repoRoot, startProduct, type Product } from './servers.js';

const embedded = process.argv.includes('--embedded');
/** `--seed-only`: prepare the kept databases and stop (the first run's minutes, apart from the measurement). */
const seedOnly = process.argv.includes('--seed-only');
const SMALL: ScaleSize = { users: 2_000, postsPerUser: 10 };
const BIG: ScaleSize = { users: Number(process.env.SCALE_USERS ?? (embedded ? 100_000 : 1_000_000)), postsPerUser: 10 };
const SAMPLES = Number(process.env.SCALE_SAMPLES ?? 30);
/** Where the kept databases live (SCALE_DATA_DIR): under /var/tmp as root, where the `postgres` user can enter. */
const KEPT =
  process.env.SCALE_DATA_DIR ??
  (process.getuid?.() === 0 ? '/var/tmp/users-posts-bench-scale' : path.join(os.homedir(), '.cache/users-posts/bench-scale'));

/** One request of the probe: a REST GET or a GraphQL query, anonymous unless `admin`. */
interface Probe {
  name: string;
  path?: string;
  graphql?: string;
  admin?: boolean;
}

const gql = (name: string, query: string): Probe => ({ name, graphql: query });
const rest = (name: string, url: string, admin = false): Probe => ({ name, path: url, admin });

/** The requests measured; `{cursor}`, `{deepCursor}` and `{connectionCursor}` are filled from each database. */
const PROBES: Probe[] = [
  rest('REST /users page 1', '/api/v1/users'),
  rest('REST /posts page 1', '/api/v1/posts'),
  rest('REST /users?role=USER', '/api/v1/users?role=USER'),
  rest('REST /users?role=ADMIN', '/api/v1/users?role=ADMIN'),
  rest('REST /users?age=42', '/api/v1/users?age=42'),
  rest('REST /users?sort=name,desc', '/api/v1/users?sort=name,desc'),
  rest('REST /users?sort=createdAt', '/api/v1/users?sort=createdAt'),
  rest('REST /users?sort=createdAt,desc', '/api/v1/users?sort=createdAt,desc'),
  rest('REST /users?sort=age,desc', '/api/v1/users?sort=age,desc'),
  rest('REST /users?sort=age&role=ADMIN', '/api/v1/users?sort=age&role=ADMIN'),
  rest('REST /posts?sort=title,desc', '/api/v1/posts?sort=title,desc'),
  rest('REST /posts?sort=createdAt,desc', '/api/v1/posts?sort=createdAt,desc'),
  rest('REST /users?q=user12345', '/api/v1/users?q=user12345'),
  rest('REST /users?q=zzz', '/api/v1/users?q=zzz'),
  rest('REST /posts?q=Post 1234567', '/api/v1/posts?q=Post%201234567'),
  rest('REST /posts?q=zzz', '/api/v1/posts?q=zzz'),
  rest('REST /users offset 9,980', '/api/v1/users?offset=9980&limit=20'),
  rest('REST /users page 500', '/api/v1/users?page=500&pageSize=20'),
  rest('REST /users offset 999,980 (refused)', '/api/v1/users?offset=999980&limit=20'),
  rest('REST /users cursor, 1st page', '/api/v1/users?cursor=&sort=name&limit=20'),
  rest('REST /users cursor after 10,000', '/api/v1/users?cursor={deepCursor}&sort=name&limit=20'),
  rest('REST /users/1000/posts', '/api/v1/users/1000/posts'),
  rest('REST /users/1000', '/api/v1/users/1000'),
  rest('REST /users?q=user12345 (ADMIN: e-mail too)', '/api/v1/users?q=user12345', true),
  rest('REST /users?sort=email,desc (ADMIN)', '/api/v1/users?sort=email,desc', true),
  gql(
    'GraphQL postsConnection(first: 20)',
    '{ postsConnection(first: 20) { edges { node { id title } } pageInfo { hasNextPage hasPreviousPage } } }',
  ),
  gql('GraphQL postsConnection + totalCount', '{ postsConnection(first: 20) { totalCount edges { node { id } } } }'),
  gql(
    'GraphQL postsConnection after 10,000',
    '{ postsConnection(first: 20, after: "{connectionCursor}") { edges { node { id } } pageInfo { hasNextPage hasPreviousPage } } }',
  ),
  gql('GraphQL statistics', '{ statistics { totalUsers totalPosts } }'),
  gql('GraphQL users(offset: 9980, limit: 20)', '{ users(offset: 9980, limit: 20) { id name } }'),
  gql('GraphQL users(offset: 900000) (refused)', '{ users(offset: 900000, limit: 20) { id } }'),
  gql('GraphQL users(limit: 20) { posts }', '{ users(limit: 20) { id name posts { id title } } }'),
];

interface Target {
  label: string;
  product: Product;
  fills: Record<string, string>;
}

async function call(target: Target, probe: Probe): Promise<{ ms: number; status: number }> {
  const fill = (text: string) => text.replace(/\{(\w+)\}/g, (_, key: string) => target.fills[key] ?? '');
  const headers: Record<string, string> = probe.admin ? { authorization: `Bearer ${target.product.token}` } : {};
  const started = process.hrtime.bigint();
  const response = probe.graphql
    ? await fetch(`${target.product.base}/graphql`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ query: fill(probe.graphql) }),
      })
    : await fetch(`${target.product.base}${fill(probe.path!)}`, { headers });
  await response.arrayBuffer();
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, status: response.status };
}

/** The cursors a deep walk reaches: after 10,000 users by name (100 pages of 100), and after post 10,000 on the connection. */
async function fillsOf(product: Product): Promise<Record<string, string>> {
  let cursor = '';
  for (let page = 0; page < 100; page++) {
    const body = (await (await fetch(`${product.base}/api/v1/users?cursor=${encodeURIComponent(cursor)}&sort=name&limit=100`)).json()) as {
      data: { nextCursor: string | null };
    };
    if (!body.data.nextCursor) break;
    cursor = body.data.nextCursor;
  }
  const connection = (await (
    await fetch(`${product.base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ users(offset: 9999, limit: 1) { id } postsConnection(first: 1) { edges { cursor } } }' }),
    })
  ).json()) as { data: { postsConnection: { edges: { cursor: string }[] } } };
  // The connection's cursors are keyset positions: walk 100 pages of 100 like a client would.
  let after = connection.data.postsConnection.edges[0]?.cursor ?? '';
  for (let page = 0; page < 100 && after; page++) {
    const next = (await (
      await fetch(`${product.base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `{ postsConnection(first: 100, after: "${after}") { pageInfo { endCursor } } }` }),
      })
    ).json()) as { data: { postsConnection: { pageInfo: { endCursor: string | null } } } };
    after = next.data.postsConnection.pageInfo.endCursor ?? '';
  }
  return { deepCursor: encodeURIComponent(cursor), connectionCursor: after };
}

/** A pg client as the seed's Query. */
const queryOf =
  (client: pg.Client): Query =>
  async <Row>(text: string) => ({ rows: (await client.query(text)).rows as Row[] });

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** A PostgreSQL database of `size`, seeded unless a previous run left it seeded from the same migrations; its URL. */
async function postgresDatabase(adminUrl: string, name: string, size: ScaleSize): Promise<{ url: string; seeded?: SeedReport }> {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const stamp = await seedStamp(size);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const exists = (await admin.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [name])).rowCount;
    if (exists) {
      const db = new pg.Client({ connectionString: url.toString() });
      await db.connect();
      const current = await seededStamp(queryOf(db)).finally(() => db.end());
      if (current === stamp) return { url: url.toString() };
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
    }
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  await applyMigrations({ databaseUrl: url.toString() });
  const db = new pg.Client({ connectionString: url.toString() });
  await db.connect();
  try {
    console.log(`seeding ${name}: ${size.users.toLocaleString('en')} users × ${size.postsPerUser} posts …`);
    return { url: url.toString(), seeded: await seedScale(queryOf(db), size, stamp) };
  } finally {
    await db.end();
  }
}

/** A PGlite data directory of `size`, seeded unless kept from a previous run with the same migrations. */
async function pgliteDirectory(name: string, size: ScaleSize): Promise<{ dir: string; seeded?: SeedReport }> {
  const dir = path.join(KEPT, 'pglite', name);
  const stamp = await seedStamp(size);
  if (existsSync(dir)) {
    const existing = await PGlite.create(dir, { extensions: PGLITE_EXTENSIONS });
    const current = await seededStamp((text) => existing.query(text)).finally(() => existing.close());
    if (current === stamp) return { dir };
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const pglite = await PGlite.create(dir, { extensions: PGLITE_EXTENSIONS });
  try {
    await applyMigrations({ pglite });
    console.log(`seeding ${name} (PGlite): ${size.users.toLocaleString('en')} users × ${size.postsPerUser} posts …`);
    const query: Query = async <Row>(text: string) => ({ rows: ((await pglite.exec(text)).at(-1)?.rows ?? []) as Row[] });
    return { dir, seeded: await seedScale(query, size, stamp) };
  } finally {
    await pglite.close();
  }
}

function printSeed(label: string, report: SeedReport | undefined): void {
  if (!report) return console.log(`${label}: kept from a previous run`);
  const builds = report.indexSeconds.map(({ name, seconds }) => `${name} ${seconds.toFixed(1)} s`).join(', ');
  console.log(`${label}: rows written in ${report.loadSeconds.toFixed(1)} s; index builds: ${builds}`);
}

/** Thrown by `--seed-only` once the databases are ready. */
class SeededOnly extends Error {}

const postgres = embedded ? undefined : await benchPostgres({ keptDir: path.join(KEPT, 'postgres') });
const targets: Target[] = [];
try {
  let products: [Product, Product];
  if (postgres) {
    const big = await postgresDatabase(postgres.adminUrl, `scale_${BIG.users}`, BIG);
    printSeed(`big (${BIG.users})`, big.seeded);
    const small = await postgresDatabase(postgres.adminUrl, `scale_${SMALL.users}`, SMALL);
    printSeed(`small (${SMALL.users})`, small.seeded);
    if (seedOnly) throw new SeededOnly();
    products = [await startProduct(big.url, await freePort()), await startProduct(small.url, await freePort())];
  } else {
    const big = await pgliteDirectory(`scale_${BIG.users}`, BIG);
    printSeed(`big (${BIG.users}, PGlite)`, big.seeded);
    const small = await pgliteDirectory(`scale_${SMALL.users}`, SMALL);
    printSeed(`small (${SMALL.users}, PGlite)`, small.seeded);
    if (seedOnly) throw new SeededOnly();
    const embeddedProduct = async (dir: string) => startProduct('', await freePort(), [], repoRoot, process.execPath, { PGLITE_DIR: dir });
    products = [await embeddedProduct(big.dir), await embeddedProduct(small.dir)];
  }
  for (const [index, product] of products.entries()) {
    targets.push({ label: index === 0 ? 'big' : 'small', product, fills: await fillsOf(product) });
  }
  const samples = new Map<string, { big: number[]; small: number[]; status: Set<string> }>();
  for (const probe of PROBES) samples.set(probe.name, { big: [], small: [], status: new Set() });
  // One warm-up round, then SAMPLES rounds; each round asks every probe of both databases in turn.
  for (let round = -1; round < SAMPLES; round++) {
    for (const probe of PROBES) {
      for (const target of targets) {
        const { ms, status } = await call(target, probe);
        if (round < 0) continue;
        const entry = samples.get(probe.name)!;
        entry[target.label as 'big' | 'small'].push(ms);
        entry.status.add(`${target.label} ${status}`);
      }
    }
  }
  const rows = PROBES.map((probe) => {
    const entry = samples.get(probe.name)!;
    const big = median(entry.big);
    const small = median(entry.small);
    return { request: probe.name, bigMs: big, smallMs: small, ratio: big / small, status: [...entry.status].sort().join(', ') };
  });
  const info = describeMachine(postgres ? postgres.version : 'PGlite (embedded)');
  console.log(`\n${info}; median of ${SAMPLES} interleaved samples`);
  console.log(`| Request | big (${BIG.users.toLocaleString('en')}) ms | small (${SMALL.users.toLocaleString('en')}) ms | big ÷ small | status |`);
  console.log('|---|---:|---:|---:|---|');
  for (const row of rows) {
    const flag = row.ratio > 3 ? ' ✗' : '';
    console.log(`| ${row.request} | ${row.bigMs.toFixed(2)} | ${row.smallMs.toFixed(2)} | ${row.ratio.toFixed(2)}${flag} | ${row.status} |`);
  }
  const worst = rows.reduce((a, b) => (b.ratio > a.ratio ? b : a));
  console.log(`\nworst: ${worst.request} at ${worst.ratio.toFixed(2)}× (goal: at most 3×)`);
  const out = path.join(repoRoot, 'bench/results');
  mkdirSync(out, { recursive: true });
  const file = path.join(out, `scale-${embedded ? 'pglite' : 'postgres'}-${new Date().toISOString().slice(0, 16).replace(/:/g, '')}.json`);
  writeFileSync(file, JSON.stringify({ machine: info, big: BIG, small: SMALL, samples: SAMPLES, rows }, null, 2));
  console.log(`written: ${path.relative(repoRoot, file)}`);
} catch (error) {
  if (!(error instanceof SeededOnly)) throw error;
} finally {
  for (const target of targets) await target.product.stop();
  await postgres?.stop();
}
