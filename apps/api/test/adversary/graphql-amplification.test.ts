// Attack: make one GraphQL request do unbounded work (nested lists × aliases × batches × fragments × introspection).
// On 2 000 users × 10 posts, each document is refused before any SQL runs or completes within the run-time budget,
// and /healthz (real HTTP) keeps answering meanwhile.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { countStatements } from '@users-posts/db/testing';
import type { PrismaClient } from '@users-posts/db';
import type { FastifyInstance } from 'fastify';
import { getIntrospectionQuery } from 'graphql';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { DEFAULT_GRAPHQL_LIMITS } from '../../src/graphql/guards/limits.js';
import { createTestApp } from '../support/app.js';
import { listen, Subscription, watchSubscribers, wsClient } from '../support/ws.js';

const USERS = 2000;

/** The /healthz poller of healthzDuring, in its own thread (plain JavaScript: workers take no TypeScript). */
const PROBER = `
const { parentPort, workerData } = require('node:worker_threads');
let polling = true;
parentPort.on('message', () => { polling = false; });
(async () => {
  await (await fetch(workerData.url)).arrayBuffer();
  parentPort.postMessage({ ready: true });
  const latencies = [];
  while (polling) {
    const started = performance.now();
    await (await fetch(workerData.url)).arrayBuffer();
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  parentPort.postMessage({ latencies });
})();
`;
const POSTS_PER_USER = 10;

/** createMany in a few statements: the 2 000 × 10 database in well under a second on PGlite. */
async function seed(prisma: PrismaClient, users: number, postsPerUser: number): Promise<void> {
  await prisma.user.createMany({ data: Array.from({ length: users }, (_, i) => ({ name: `Attacker data ${i}`, email: `amp${i}@example.com` })) });
  const ids = (await prisma.user.findMany({ select: { id: true }, where: { email: { startsWith: 'amp' } } })).map((user) => user.id);
  const posts = ids.flatMap((authorId) =>
    Array.from({ length: postsPerUser }, (_, j) => ({ title: `Post ${j}`, content: 'x'.repeat(50), authorId })),
  );
  for (let i = 0; i < posts.length; i += 5000) await prisma.post.createMany({ data: posts.slice(i, i + 5000) });
}

let app: FastifyInstance;
let base: string;
beforeAll(async () => {
  app = await createTestApp();
  await seed(app.db.prisma, USERS, POSTS_PER_USER);
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}, 60_000);
afterAll(() => app.close());

interface Answer {
  status: number;
  bytes: number;
  ms: number;
  statements: number;
  body: unknown;
}

/** POSTs one document (or a batch) over real HTTP and records status, size, time and SQL statements. */
async function attack(payload: unknown): Promise<Answer> {
  const counter = countStatements(app.db);
  const started = performance.now();
  try {
    const response = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' },
      body: JSON.stringify(payload),
    });
    const text = await response.text();
    return { status: response.status, bytes: text.length, ms: performance.now() - started, statements: counter.count, body: JSON.parse(text) };
  } finally {
    counter.stop();
  }
}

type Result = { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] };
const codes = (body: unknown) => (body as Result).errors?.map((error) => error.extensions?.code) ?? [];

function expectRefused(answer: Answer): void {
  expect(answer.status).toBe(400);
  expect(codes(answer.body)).toEqual(['QUERY_TOO_COMPLEX']);
  expect((answer.body as Result).data ?? null).toBeNull();
  expect(answer.statements).toBe(0); // nothing executed
}

/** users → posts → author → … to armor depth 10 (the leaf counts). */
const NESTED = 'users { posts { author { posts { author { posts { author { posts { author { id } } } } } } } } }';
const aliased = (body: string, count = 15) => `{ ${Array.from({ length: count }, (_, i) => `a${i}: ${body}`).join(' ')} }`;

describe('attack: amplification through nested lists, aliases, batches, fragments and introspection', () => {
  it('refuses nesting to depth 10 over lists, before any SQL', async () => {
    expectRefused(await attack({ query: `{ ${NESTED} }` }));
  });

  it('refuses 15 aliases of the nested list', async () => {
    expectRefused(await attack({ query: aliased(NESTED) }));
    expectRefused(await attack({ query: aliased('users { posts { author { id } } }') }));
  });

  it('counts a batch as one request: 10 operations each under the limit run only while the total fits', async () => {
    // users(100) × (1 + posts(5) × (1 + author)) = 1 100 each: four fit in 5 000, the rest of the batch is refused
    // (2 100 objects each at run time: within the node budget).
    const op = { query: '{ users(limit: 100) { id name posts { title author { id } } } }' };
    const answer = await attack(Array.from({ length: 10 }, () => op));
    expect(answer.status).toBe(200);
    const results = answer.body as Result[];
    expect(results.filter((result) => !result.errors)).toHaveLength(4);
    expect(results.slice(4).every((result) => codes(result).join() === 'QUERY_TOO_COMPLEX' && result.data == null)).toBe(true);
  });

  it('refuses a batch of 10 expensive operations without running any', async () => {
    const answer = await attack(Array.from({ length: 10 }, () => ({ query: aliased(NESTED, 3) })));
    expect(answer.statements).toBe(0);
    for (const result of answer.body as Result[]) expect(codes(result)).toEqual(['QUERY_TOO_COMPLEX']);
  });

  it('counts fragments as the lists they spread, and a fragment spread many times is walked once', async () => {
    const spread = `{ ...Q } fragment Q on Query { ${aliased('users { ...U }', 10).slice(1, -1)} } fragment U on User { posts { author { ...P } } } fragment P on User { posts { id } }`;
    expectRefused(await attack({ query: spread }));
    // 60 fragments, each spreading the next twice: 2^60 paths if walked naively; answered at once.
    const chain = Array.from({ length: 60 }, (_, i) => `fragment F${i} on User { posts { author { id } } ...F${i + 1} ...F${i + 1} }`).join(' ');
    const answer = await attack({ query: `{ users(limit: 1) { ...F0 } } ${chain} fragment F60 on User { id }` });
    expect(answer.ms).toBeLessThan(2000);
    expect(answer.statements).toBeLessThanOrEqual(3);
  });

  it('uses the variables: limit 100 at every level is refused, limit 1 runs', async () => {
    // users(100) × (1 + 5 × (1 + 1 + 5 × (1 + 1 + 5))) = 18 600 with n = 100; 186 + 7 with n = 1.
    const query =
      'query ($n: Int) { users(limit: $n) { posts { author { posts { author { posts { id } } } } } } posts(limit: $n) { author { id } } }';
    expectRefused(await attack({ query, variables: { n: 100 } }));
    const small = await attack({ query, variables: { n: 1 } });
    expect(codes(small.body)).toEqual([]);
    // A connection's `first` sizes its edges: 2 × 100 × (1 + edges × (1 + node × (1 + author × (1 + 5 × 7)))) = 8 000.
    const connection = `query ($n: Int) { ${aliased('postsConnection(first: $n) { edges { node { author { posts { author { posts { id } } } } } } }', 2).slice(1, -1)} }`;
    expectRefused(await attack({ query: connection, variables: { n: 100 } }));
    expect(codes((await attack({ query: connection, variables: { n: 1 } })).body)).toEqual([]);
  });

  it('costs a repeated document again when a variable can change it (@include), though the cost of others is remembered', async () => {
    // A cheap first run must not let the same text through later with the expensive branch switched on.
    const query = `query ($all: Boolean!) { user(id: "1") { id } ${aliased('users(limit: 100) { posts { author { posts { id } } } }', 3)
      .slice(1, -1)
      .replace(/\(limit: 100\)/g, '(limit: 100) @include(if: $all)')} }`;
    expect(codes((await attack({ query, variables: { all: false } })).body)).toEqual([]);
    expectRefused(await attack({ query, variables: { all: true } }));
    expect(codes((await attack({ query, variables: { all: false } })).body)).toEqual([]);
  });
  it('counts an explicit null size as the default the resolver uses (recentPosts 10, postsConnection 20), not as 1', async () => {
    // 15 × 370 with limit 10 (refused); counted as 1 it would have been 15 × 37 and run.
    expectRefused(await attack({ query: aliased('recentPosts(limit: null) { author { posts { author { posts { title } } } } }') }));
    expectRefused(
      await attack({ query: aliased('postsConnection(first: null) { edges { node { author { posts { author { posts { title } } } } } } }') }),
    );
  });

  it('is not bypassed by naming the operation or a fragment __schema', async () => {
    expectRefused(await attack({ query: `query __schema { ${NESTED} }` }));
    expectRefused(
      await attack({ query: `{ ...__schema } fragment __schema on Query { ${aliased('users { posts { author { id } } }', 5).slice(1, -1)} }` }),
    );
  });

  it('keeps introspection usable (GraphiQL’s full query), and refuses aliased deep __schema selections', async () => {
    const full = await attack({ query: getIntrospectionQuery() });
    expect(full.status).toBe(200);
    expect(codes(full.body)).toEqual([]);
    // Its cost (351 today) leaves room: a batch of 10 full introspection queries still fits in one request.
    const tooling = await attack(Array.from({ length: 10 }, () => ({ query: getIntrospectionQuery() })));
    for (const result of tooling.body as Result[]) expect(codes(result)).toEqual([]);
    // graphql-js' own MaxIntrospectionDepthRule refuses `fields` nested three deep (a validation error, no SQL) …
    const deep = await attack({ query: aliased('__schema { types { fields { type { fields { type { fields { type { name } } } } } } } }') });
    expect(deep.status).toBe(400);
    expect(new Set(codes(deep.body))).toEqual(new Set(['GRAPHQL_VALIDATION_FAILED']));
    expect(deep.statements).toBe(0);
    // … and within that depth, aliases of __schema add up in the cost like any list (types × fields × fields).
    expectRefused(await attack({ query: aliased('__schema { types { fields { type { fields { name type { name } } } } } }') }));
    const ofType = `{ __type(name: "Query") { ${'fields { type { ofType { '.repeat(2)}name${' } } }'.repeat(2)} } }`;
    const chain = await attack({ query: ofType });
    expect(chain.ms).toBeLessThan(1000);
  });

  it('keeps the README example working (every user up to 1 000, with their posts) and a depth-10 query over single objects', async () => {
    const readme = await attack({ query: '{ users { id name posts { title } } }' });
    expect(codes(readme.body)).toEqual([]);
    const users = (readme.body as { data: { users: { posts: unknown[] }[] } }).data.users;
    expect(users).toHaveLength(1000); // the documented maximum without `limit`
    expect(users.every((user) => user.posts.length === POSTS_PER_USER)).toBe(true);
    const single = await attack({
      query: `{ users(limit: 1) { posts { author { posts { author { posts { author { posts { author { id } } } } } } } } } }`,
    });
    expect(codes(single.body)).toEqual([]);
  });

  /**
   * Polls /healthz over real HTTP every 10 ms while `work` runs; returns the latencies, sorted. The client runs in a
   * worker thread, as a monitor outside the server would: polled from this thread, each probe's own request and
   * answer also had to wait for turns of the event loop the server's work is using (a median of 141 ms was measured
   * that way on PostgreSQL with nothing else running).
   */
  async function healthzDuring(work: () => Promise<unknown>): Promise<number[]> {
    const prober = new Worker(PROBER, { eval: true, workerData: { url: `${base}/healthz` } });
    try {
      await once(prober, 'message'); // its connection is set up before measuring
      await work();
      const done = once(prober, 'message');
      prober.postMessage('stop');
      const [{ latencies }] = (await done) as [{ latencies: number[] }];
      return latencies.sort((a, b) => a - b);
    } finally {
      await prober.terminate();
    }
  }

  it('answers /healthz in under 100 ms while the refused attacks run, over and over', async () => {
    const fragments = 'fragment U on User { posts { author { ...P } } } fragment P on User { posts { id } }';
    const attacks = [
      { query: aliased(NESTED) },
      Array.from({ length: 10 }, () => ({ query: aliased(NESTED, 3) })),
      { query: `${aliased('users { ...U }', 10)} ${fragments}` },
      { query: `query __schema { ${NESTED} }` },
      { query: aliased('__schema { types { fields { type { fields { name type { name } } } } } }') },
      { query: 'query ($n: Int) { users(limit: $n) { posts { author { posts { author { posts { id } } } } } } }', variables: { n: 100 } },
    ];
    const latencies = await healthzDuring(async () => {
      for (let round = 0; round < 5; round++) {
        for (const payload of attacks) {
          const answer = await attack(payload);
          expect(answer.status).toBe(answer.body instanceof Array ? 200 : 400);
          expect(JSON.stringify(answer.body)).toContain('QUERY_TOO_COMPLEX');
        }
      }
    });
    expect(latencies.length).toBeGreaterThan(0);
    expect(latencies.at(-1)).toBeLessThan(100);
  });

  it('ends the most expensive accepted requests within the run-time budget, in bounded time and size', async () => {
    // Cost 7 × 700 = 4 900 (accepted), but 7 × (1 000 + 1 000 + 10 000) objects at run time: stopped at 50 000.
    const overBudget = aliased('posts { title author { name posts { title } } }', 7);
    // The README example: 1 000 users and their 10 000 posts, within the budget.
    const readme = '{ users { id name posts { title } } }';
    let answers: Answer[] = [];
    const started = performance.now();
    const latencies = await healthzDuring(async () => {
      answers = await Promise.all([attack({ query: overBudget }), attack({ query: readme }), attack({ query: overBudget })]);
    });
    const workMs = performance.now() - started;
    // The meter lets pending I/O through every YIELD_EVERY_NODES resolved nodes, so the probe is served all along.
    // Measured here with the prober in its own thread (idle 2-core machine): on PostgreSQL ~1 s of work, 15–18 probes,
    // median 25–46 ms, worst 116–138 ms; on PGlite (the query itself runs in this thread) 13 probes, median 26–74 ms,
    // worst 282–489 ms. With the yielding turned off: 6 probes, median 148 ms, and the test fails. What cannot be split
    // is one database answer read and mapped and a major GC of the requests' heap. Every bound scales with the work,
    // which slows with the machine as the probes do.
    const median = latencies[Math.floor(latencies.length / 2)]!;
    console.info(
      `accepted heavy requests: ${Math.round(workMs)} ms of work, ${latencies.length} probes, median ${Math.round(median)} ms, worst ${Math.round(latencies.at(-1)!)} ms`,
    );
    expect(latencies.length).toBeGreaterThan(3);
    expect(workMs / latencies.length).toBeLessThan(400); // answered all along, not between long stalls
    expect(median).toBeLessThan(Math.max(100, workMs / 10));
    // The worst probe within the work, not after it: beside a CPU hog (two busy loops on the 2 cores, issue 34) one
    // took 529 ms of 914 (the scheduler's share, not the server's); the count and the median above are what fail
    // when the meter stops yielding.
    expect(latencies.at(-1)).toBeLessThan(workMs);
    expect(codes(answers[0]!.body)).toEqual(['QUERY_TOO_COMPLEX']);
    expect(codes(answers[1]!.body)).toEqual([]);
    for (const answer of answers) {
      expect(answer.ms).toBeLessThan(DEFAULT_GRAPHQL_LIMITS.maxExecutionMs + 2000);
      expect(answer.bytes).toBeLessThan(1024 * 1024);
    }
  });
});

describe('attack: a document within the cost limit on data far larger than its estimates', () => {
  let small: FastifyInstance;
  beforeAll(async () => {
    small = await createTestApp({ graphqlLimits: { ...DEFAULT_GRAPHQL_LIMITS, maxNodes: 2000 } });
    await seed(small.db.prisma, 300, 10);
  }, 60_000);
  afterAll(() => small.close());

  it('is stopped by the node budget with one QUERY_TOO_COMPLEX and no data', async () => {
    const response = await small.inject({ method: 'POST', url: '/graphql', payload: { query: '{ users { id posts { title } } }' } });
    expect(response.statusCode).toBe(400);
    const body = response.json() as Result;
    expect(body.data).toBeNull();
    expect(codes(body)).toEqual(['QUERY_TOO_COMPLEX']);
    expect(body.errors?.[0]?.message).toMatch(/objects/);
    // Within the budget, the same request runs.
    const within = await small.inject({ method: 'POST', url: '/graphql', payload: { query: '{ users(limit: 100) { id posts { title } } }' } });
    expect((within.json() as Result).errors).toBeUndefined();
  });

  it('counts long text by its size: aliases of 20 000-character contents are stopped, not answered with megabytes', async () => {
    const author = await small.db.prisma.user.findFirstOrThrow();
    await small.db.prisma.post.createMany({
      data: Array.from({ length: 20 }, () => ({ title: 'long', content: 'y'.repeat(20_000), authorId: author.id })),
    });
    // Cost 15 × 100 = 1 500: accepted; at run time 200 nodes per content, past the 2 000 of this app.
    const response = await small.inject({
      method: 'POST',
      url: '/graphql',
      payload: { query: aliased('posts(limit: 100, offset: 2990) { content }') },
    });
    expect(response.statusCode).toBe(400);
    expect(codes(response.json())).toEqual(['QUERY_TOO_COMPLEX']);
    expect(response.body.length).toBeLessThan(10_000);
  });

  it('shares the budget across the operations of a batch', async () => {
    const op = { query: '{ users(limit: 100) { id posts { title } } }' }; // 1 100 objects each
    const response = await small.inject({ method: 'POST', url: '/graphql', payload: [op, op] });
    const results = response.json() as Result[];
    expect(results.some((result) => codes(result).includes('QUERY_TOO_COMPLEX'))).toBe(true);
  });
});

describe('attack: a long-lived subscription accumulating work, or one event fanning out', () => {
  let sub: FastifyInstance;
  let ws: string;
  let client: ReturnType<typeof wsClient>;
  beforeAll(async () => {
    sub = await createTestApp({ graphqlLimits: { ...DEFAULT_GRAPHQL_LIMITS, maxNodes: 25 } });
    await seed(sub.db.prisma, 2, 30);
    ws = (await listen(sub)).ws;
    client = wsClient(ws);
  }, 60_000);
  afterAll(async () => {
    await client.dispose();
    await sub.close();
  });

  it('has a budget per event: 30 cheap events pass, one event over the budget gets QUERY_TOO_COMPLEX', async () => {
    const watch = watchSubscribers(sub);
    const cheap = new Subscription<{ postCreated: { id: string } }>(client, 'subscription { postCreated { id author { name } } }');
    const fanOut = new Subscription(client, 'subscription { postCreated { id author { posts { id } } } }');
    await watch.until(2);
    const post = await sub.db.prisma.post.findFirstOrThrow();
    // 2 nodes per event for `cheap`: 60 over the 30 events, beyond 25 if the budget lasted as long as the subscription.
    for (let i = 0; i < 30; i++) sub.services.events.publish('postCreated', { ...post });
    for (let i = 0; i < 30; i++) expect((await cheap.next()).errors).toBeUndefined();
    // 1 + 1 + 30 posts: over 25 within one event.
    const refused = await fanOut.next();
    expect(refused.errors?.map((error) => error.extensions?.code)).toEqual(['QUERY_TOO_COMPLEX']);
    expect(refused.data ?? null).toBeNull();
    cheap.unsubscribe();
    fanOut.unsubscribe();
  });
});
