// Attacks on the contract usage record (plugins/contract-usage.ts, SPEC §0.2 and §6 "Usage that can be trusted"): client
// and operation names are the caller's to invent, and each new one was a row a day for ever. Over real HTTP on the real
// app and database: the record keeps its daily bounds, a real client keeps its own name, old days go, the export pages.
import { describe, expect, it } from '@jest/globals';
import { countStatements, createTestDatabase } from '@users-posts/db/testing';
import type { PrismaClient } from '@users-posts/db';
import type { FastifyInstance } from 'fastify';
import { isInterfaceType, isObjectType } from 'graphql';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { exportUsage, USAGE_FORMAT, type ClientUsage, type UsageFile } from '../../../../scripts/contracts-usage.js';
import { buildApp } from '../../src/app.js';
import { buildGraphQLSchema } from '../../src/graphql/schema/schema.js';
import {
  ANONYMOUS_OPERATION,
  DEFAULT_USAGE_BOUNDS,
  FIXED_ROWS_MAX,
  OVERFLOW_CLIENT,
  UsageBook,
  declaredQueryParameters,
  rowKey,
} from '../../src/plugins/contract-usage.js';
import { useTestApp } from '../support/app.js';
import { testConfig } from '../support/config.js';

const DAY_MS = 86_400_000;
const today = () => new Date().toISOString().slice(0, 10);
const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS).toISOString().slice(0, 10);
const HOSTILE = '203.0.113.66';

const graphql = (app: FastifyInstance, query: string, client: string, remoteAddress: string) =>
  app.inject({ method: 'POST', url: '/graphql', headers: { 'x-client-name': client }, payload: { query }, remoteAddress });

async function rowsOf(prisma: PrismaClient, coordinate: string) {
  return prisma.contractUsage.findMany({ where: { coordinate }, select: { client: true, operation: true, requests: true } });
}

const total = (rows: { requests: bigint }[]) => rows.reduce((sum, row) => sum + row.requests, 0n);

describe('one address inventing names', () => {
  const ROWS_PER_ADDRESS = 60;
  const suite = useTestApp({
    contractUsage: { enabled: true, flushIntervalMs: 3_600_000, rowsPerAddress: ROWS_PER_ADDRESS },
    defaultRateLimit: { max: 100_000, windowMs: 60_000 },
  });

  it('one address inventing client and operation names cannot grow the record past its daily bound', async () => {
    const { app } = suite;
    await app.contractUsage.started;
    await app.contractUsage.flush(); // the cast's own requests
    const before = await app.db.prisma.contractUsage.count();
    // A new client and a new operation name on every request, a flush now and then (the old bound was per flush).
    const sent = 600;
    for (let n = 0; n < sent; n++) {
      const answer = await graphql(app, `query Made${n} { recentPosts(limit: 1) { id } }`, `made-${n}`, HOSTILE);
      expect(answer.statusCode).toBe(200);
      if (n % 200 === 199) await app.contractUsage.flush();
    }
    // Then the names it did get recorded, combined: every pair is new rows, until the address's row share is spent.
    for (let client = 0; client < 10; client++)
      for (let operation = 0; operation < 10; operation++)
        expect((await graphql(app, `query Made${operation} { recentPosts(limit: 1) { id title } }`, `made-${client}`, HOSTILE)).statusCode).toBe(200);
    // REST too: new names on every request.
    for (let n = 0; n < 100; n++) {
      const answer = await app.inject({
        method: 'GET',
        url: '/api/v1/posts?limit=1',
        headers: { 'x-client-name': `rest-${n}` },
        remoteAddress: HOSTILE,
      });
      expect(answer.statusCode).toBe(200);
    }
    await app.contractUsage.flush();

    const added = (await app.db.prisma.contractUsage.count()) - before;
    const fixedLabels = await app.db.prisma.contractUsage.count({
      where: { client: { in: ['anonymous', OVERFLOW_CLIENT] }, operation: { in: ['', ANONYMOUS_OPERATION] } },
    });
    // Its rows are its share; beyond it only the fixed labels' rows (two per coordinate at most).
    expect(added - fixedLabels).toBeLessThanOrEqual(ROWS_PER_ADDRESS);
    const clients = await app.db.prisma.contractUsage.findMany({
      where: { client: { startsWith: 'made-' } },
      distinct: ['client'],
      select: { client: true },
    });
    const restClients = await app.db.prisma.contractUsage.findMany({
      where: { client: { startsWith: 'rest-' } },
      distinct: ['client'],
      select: { client: true },
    });
    expect(clients.length + restClients.length).toBeLessThanOrEqual(DEFAULT_USAGE_BOUNDS.newNamesPerAddress);
    const operations = await app.db.prisma.contractUsage.findMany({
      where: { operation: { startsWith: 'Made' } },
      distinct: ['operation'],
      select: { operation: true },
    });
    expect(operations.length).toBeLessThanOrEqual(DEFAULT_USAGE_BOUNDS.newNamesPerAddress);
    // Nothing is lost: every request is counted, the ones past the bounds under the overflow labels.
    const recent = await rowsOf(app.db.prisma, 'Query.recentPosts');
    expect(total(recent)).toBe(BigInt(sent + 100));
    expect(recent.find((row) => row.client === OVERFLOW_CLIENT && row.operation === ANONYMOUS_OPERATION)?.requests).toBeGreaterThan(
      BigInt(sent - 20),
    );
    const listPosts = await rowsOf(app.db.prisma, 'listPosts');
    expect(total(listPosts)).toBe(100n);
    expect(listPosts.find((row) => row.client === OVERFLOW_CLIENT)?.requests).toBeGreaterThanOrEqual(90n);

    // The stores' declarations hold what they say.
    for (const name of ['contract-usage-tally', 'contract-usage-rows']) {
      const store = app.stores.get(name)!;
      expect((await store.size()).entries).toBeLessThanOrEqual(store.maxEntries);
    }
  });

  it('a real client is not crowded out by one address’s made-up names', async () => {
    const { app } = suite;
    const hostile = '203.0.113.67';
    // 1 100 made-up names in one flush window: the old per-flush cap of 1 000 names was spent, and the real client's
    // requests after it were recorded as `anonymous`.
    for (let n = 0; n < 1100; n++) {
      const answer = await graphql(app, `query Feed${n} { recentPosts(limit: 2) { id } }`, `bogus-${n}`, hostile);
      expect(answer.statusCode).toBe(200);
    }
    // The real client: a name never seen, from its own address.
    for (let n = 0; n < 60; n++) {
      const answer = await graphql(app, 'query RecentPostsWidget { recentPosts(limit: 3) { id title } }', 'real-widget', '198.51.100.23');
      expect(answer.statusCode).toBe(200);
    }
    await app.contractUsage.flush();
    const real = (await rowsOf(app.db.prisma, 'Query.recentPosts')).filter((row) => row.operation === 'RecentPostsWidget');
    expect(real).toEqual([{ client: 'real-widget', operation: 'RecentPostsWidget', requests: 60n }]);
    const title = await rowsOf(app.db.prisma, 'Post.title');
    expect(title.filter((row) => row.client === 'real-widget')).toEqual([{ client: 'real-widget', operation: 'RecentPostsWidget', requests: 60n }]);
  });
});

describe('the day’s row bound, shared by restarts and instances', () => {
  const ROWS_PER_DAY = 100;
  const suite = useTestApp({
    contractUsage: { enabled: true, flushIntervalMs: 3_600_000, rowsPerDay: ROWS_PER_DAY },
    defaultRateLimit: { max: 100_000, windowMs: 60_000 },
  });

  it('rows another instance (or this one before a restart) added today count: rows beyond the bound go to the overflow labels', async () => {
    const { app } = suite;
    await app.contractUsage.flush();
    // 90 rows of today that this instance's memory knows nothing of.
    await app.db.prisma.$executeRaw`
      INSERT INTO contract_usage (kind, coordinate, client, operation, day, requests)
      SELECT 'graphql', 'Query.posts', 'other-instance-' || g, 'Elsewhere', ${today()}::date, 1 FROM generate_series(1, 90) g`;
    // 20 clients from 20 addresses, each within every share of its own: 3 rows each, 60 in all, in memory.
    for (let n = 0; n < 20; n++) {
      const answer = await graphql(app, `query Widget${n} { recentPosts(limit: 1) { id } }`, `widget-${n}`, `198.51.100.${n + 1}`);
      expect(answer.statusCode).toBe(200);
    }
    await app.contractUsage.flush();
    const rows = await app.db.prisma.contractUsage.findMany({ where: { day: new Date(`${today()}T00:00:00Z`) } });
    const fixed = rows.filter((row) => [OVERFLOW_CLIENT, 'anonymous'].includes(row.client) && ['', ANONYMOUS_OPERATION].includes(row.operation));
    expect(rows.length - fixed.length).toBeLessThanOrEqual(ROWS_PER_DAY);
    expect(rows.filter((row) => row.client.startsWith('other-instance-'))).toHaveLength(90);
    // What did not fit is counted, not lost: under `name:other`, one row per coordinate.
    const recent = rows.filter((row) => row.coordinate === 'Query.recentPosts');
    expect(total(recent)).toBe(20n);
    expect(recent.find((row) => row.client === OVERFLOW_CLIENT)?.requests).toBeGreaterThan(0n);
  });
});

describe('retention', () => {
  it('rows past the window are deleted, at start and when asked; names recorded within it keep their place', async () => {
    const database = await createTestDatabase();
    const retentionDays = DEFAULT_USAGE_BOUNDS.retentionDays;
    const insert = (day: string, client: string, operation: string) => database.prisma.$executeRaw`
      INSERT INTO contract_usage (kind, coordinate, client, operation, day, requests)
      VALUES ('graphql', 'Query.posts', ${client}, ${operation}, ${day}::date, 5)`;
    await insert(daysAgo(retentionDays + 3), 'long-gone', 'Gone');
    await insert(daysAgo(retentionDays), 'just-gone', 'JustGone');
    await insert(daysAgo(retentionDays - 1), 'oldest-kept', 'Kept');
    await insert(daysAgo(1), 'yesterdays-app', 'YesterdayFeed');
    // One new name of each kind a day, to see the known names keep their place when the day's share is spent.
    const app = await buildApp(
      testConfig({
        contractUsage: { enabled: true, flushIntervalMs: 3_600_000, newNamesPerDay: 1 },
        defaultRateLimit: { max: 10_000, windowMs: 60_000 },
      }),
      { database },
    );
    try {
      await app.ready();
      await app.contractUsage.started;
      const clients = async () => (await database.prisma.contractUsage.findMany({ select: { client: true } })).map((row) => row.client).sort();
      expect(await clients()).toEqual(['oldest-kept', 'yesterdays-app']);

      // The day's one new name is spent by someone; the name recorded yesterday is still its own, a new one is not.
      expect((await graphql(app, 'query Spend { posts(limit: 1) { id } }', 'first-new', '203.0.113.1')).statusCode).toBe(200);
      expect((await graphql(app, 'query YesterdayFeed { posts(limit: 1) { id } }', 'yesterdays-app', '203.0.113.2')).statusCode).toBe(200);
      expect((await graphql(app, 'query Later { posts(limit: 1) { id } }', 'second-new', '203.0.113.3')).statusCode).toBe(200);
      await app.contractUsage.flush();
      const recorded = await database.prisma.contractUsage.findMany({
        where: { coordinate: 'Query.posts', day: new Date(`${today()}T00:00:00Z`) },
        select: { client: true, operation: true },
      });
      expect(recorded).toEqual(
        expect.arrayContaining([
          { client: 'first-new', operation: 'Spend' },
          { client: 'yesterdays-app', operation: 'YesterdayFeed' },
          { client: OVERFLOW_CLIENT, operation: ANONYMOUS_OPERATION },
        ]),
      );
      expect(recorded.map((row) => row.client)).not.toContain('second-new');

      // Asked again (as every hour): a row that has just left the window goes, the others stay.
      await database.prisma.$executeRaw`UPDATE contract_usage SET day = ${daysAgo(retentionDays)}::date WHERE client = 'oldest-kept'`;
      expect(await app.contractUsage.retain()).toBe(1);
      expect(await clients()).not.toContain('oldest-kept');
      expect(await clients()).toContain('yesterdays-app');
    } finally {
      await app.close();
    }
  });

  it('a new day gives new shares, and names not recorded within the retention are forgotten', () => {
    let now = Date.UTC(2030, 0, 10, 23, 0);
    const book = new UsageBook({ ...DEFAULT_USAGE_BOUNDS, retentionDays: 3, newNamesPerAddress: 1 }, () => now);
    const rows = (client: string, operation: string) => [rowKey('graphql', 'Query.posts', client, operation)];
    expect(book.admit('first', 'One', 'a', rows).own).toBe(true);
    expect(book.admit('second', 'Two', 'a', rows).rows).toEqual(rows(OVERFLOW_CLIENT, ANONYMOUS_OPERATION));
    now += 2 * 3_600_000; // past midnight
    expect(book.today()).toBe('2030-01-11');
    expect(book.admit('second', 'Two', 'a', rows).own).toBe(true);
    expect(book.clients.has('first')).toBe(true);
    now += 3 * DAY_MS; // `first` was last recorded four days ago, `second` three
    book.today();
    expect(book.clients.has('first')).toBe(false);
    expect(book.clients.has('second')).toBe(false);
    expect(book.operations.size).toBe(0);
  });

  it('the fixed labels’ rows the contract allows stay under FIXED_ROWS_MAX', () => {
    const schema = buildGraphQLSchema();
    let coordinates = 0;
    for (const type of Object.values(schema.getTypeMap())) {
      if (type.name.startsWith('__') || !(isObjectType(type) || isInterfaceType(type))) continue;
      for (const field of Object.values(type.getFields())) coordinates += 1 + field.args.length;
    }
    let rest = 0;
    for (const parameters of declaredQueryParameters().values()) rest += 1 + parameters.size;
    expect(2 * (coordinates + rest)).toBeLessThanOrEqual(FIXED_ROWS_MAX);
  });
});

/** The usage file as the in-memory export built it before it streamed (issue 46): the reference for the same rows. */
async function inMemoryUsage(prisma: PrismaClient, days: number, now: Date): Promise<UsageFile> {
  const dayOf = (date: Date) => date.toISOString().slice(0, 10);
  const sorted = <T>(record: Record<string, T>) => Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const addTo = (usage: ClientUsage, requests: number, lastSeen: string) => {
    usage.requests += requests;
    if (lastSeen > usage.lastSeen) usage.lastSeen = lastSeen;
  };
  const since = dayOf(new Date(now.getTime() - (days - 1) * DAY_MS));
  const rows = await prisma.$queryRaw<{ kind: string; coordinate: string; client: string; operation: string; requests: bigint; last_seen: Date }[]>`
    SELECT kind, coordinate, client, operation, sum(requests)::bigint AS requests, max(day) AS last_seen
    FROM contract_usage WHERE day >= ${since}::date AND day <= ${dayOf(now)}::date
    GROUP BY kind, coordinate, client, operation`;
  const rest: UsageFile['rest'] = {};
  const graphqlUsage: UsageFile['graphql'] = {};
  for (const row of rows) {
    const requests = Number(row.requests);
    const lastSeen = dayOf(row.last_seen);
    if (row.kind === 'rest') {
      const entry = (rest[row.coordinate] ??= { clients: {}, parameters: {} });
      addTo((entry.clients[row.client] ??= { requests: 0, lastSeen }), requests, lastSeen);
    } else if (row.kind === 'rest-parameter') {
      const at = row.coordinate.indexOf('?');
      const entry = (rest[row.coordinate.slice(0, at)] ??= { clients: {}, parameters: {} });
      const parameter = (entry.parameters[row.coordinate.slice(at + 1)] ??= {});
      addTo((parameter[row.client] ??= { requests: 0, lastSeen }), requests, lastSeen);
    } else if (row.kind === 'graphql') {
      const entry = (graphqlUsage[row.coordinate] ??= { clients: {} });
      const client = (entry.clients[row.client] ??= { requests: 0, lastSeen, operations: [] });
      addTo(client, requests, lastSeen);
      client.operations.push(row.operation);
    }
  }
  for (const entry of Object.values(rest)) {
    entry.clients = sorted(entry.clients);
    entry.parameters = sorted(Object.fromEntries(Object.entries(entry.parameters).map(([name, clients]) => [name, sorted(clients)])));
  }
  for (const entry of Object.values(graphqlUsage)) {
    for (const client of Object.values(entry.clients)) client.operations = [...new Set(client.operations)].sort();
    entry.clients = sorted(entry.clients);
  }
  return { format: USAGE_FORMAT, exportedAt: now.toISOString(), windowDays: days, rest: sorted(rest), graphql: sorted(graphqlUsage) };
}

describe('the export', () => {
  it('the export streams a large record in bounded memory: paged reads, the same file as the in-memory reading', async () => {
    const database = await createTestDatabase();
    const dir = await mkdtemp(path.join(os.tmpdir(), 'usage-export-'));
    try {
      const { prisma } = database;
      // A varied record: operations with clients and parameters, with clients only, with parameters only; several
      // days (some past the window), clients whose byte order and case differ, operations per client.
      const clients = `(ARRAY['web', 'Mobile', 'user:12', 'user:3', 'anonymous', 'name:other', '_tool', 'a.b-c'])`;
      await prisma.$executeRawUnsafe(`
        INSERT INTO contract_usage (kind, coordinate, client, operation, day, requests)
        SELECT 'rest', 'op' || (g % 7), ${clients}[1 + g % 8], '', current_date - (g % 5) * 9, g FROM generate_series(1, 400) g
        ON CONFLICT DO NOTHING`);
      await prisma.$executeRawUnsafe(`
        INSERT INTO contract_usage (kind, coordinate, client, operation, day, requests)
        SELECT 'rest-parameter', 'op' || (3 + g % 5) || '?p' || (g % 4), ${clients}[1 + g % 8], '', current_date - g % 3, g FROM generate_series(1, 400) g
        ON CONFLICT DO NOTHING`);
      await prisma.$executeRawUnsafe(`
        INSERT INTO contract_usage (kind, coordinate, client, operation, day, requests)
        SELECT 'graphql', 'Type' || (g % 6) || '.field', ${clients}[1 + g % 8], (ARRAY['Feed', 'anonymous-operation', 'Z', 'feed'])[1 + g % 4],
          current_date - g % 40, g FROM generate_series(1, 2000) g
        ON CONFLICT DO NOTHING`);
      const now = new Date();
      const file = path.join(dir, 'contracts/usage.json');
      // Pages of 7 rows: groups (an operation, a client's operations) cut across pages.
      const summary = await exportUsage(prisma, file, { days: 30, now, pageRows: 7 });
      const reference = await inMemoryUsage(prisma, 30, now);
      expect(await readFile(file, 'utf8')).toBe(`${JSON.stringify(reference, null, 2)}\n`);
      expect(summary.restOperations).toBe(Object.keys(reference.rest).length);
      expect(Object.keys(reference.rest)).toContain('op0'); // clients, no parameters
      expect(reference.rest.op7!.clients).toEqual({}); // parameters only
      // An empty record is a file too.
      const empty = await createTestDatabase();
      try {
        await exportUsage(empty.prisma, file, { days: 30, now });
        expect(await readFile(file, 'utf8')).toBe(`${JSON.stringify(await inMemoryUsage(empty.prisma, 30, now), null, 2)}\n`);
      } finally {
        await empty.close();
      }

      // 50 000 groups: read 1 000 at a time through the cursors, never as one result.
      await prisma.$executeRaw`DELETE FROM contract_usage`;
      await prisma.$executeRawUnsafe(`
        INSERT INTO contract_usage (kind, coordinate, client, operation, day, requests)
        SELECT 'graphql', 'Type' || (g % 500) || '.field', 'client-' || (g / 500), 'Op', current_date, 1 FROM generate_series(0, 49999) g`);
      const statements = countStatements(database);
      let large: Awaited<ReturnType<typeof exportUsage>>;
      try {
        large = await exportUsage(prisma, file, { days: 30 });
      } finally {
        statements.stop();
      }
      const fetches = statements.statements.filter((sql) => /^FETCH FORWARD 1000 FROM/.test(sql));
      expect(fetches.length).toBe(large.pages);
      expect(large.pages).toBeGreaterThanOrEqual(50);
      expect(statements.statements.filter((sql) => sql.includes('contract_usage') && !sql.startsWith('DECLARE'))).toEqual([]);
      const usage = JSON.parse(await readFile(file, 'utf8')) as UsageFile;
      expect(Object.keys(usage.graphql)).toHaveLength(500);
      expect(large.graphqlCoordinates).toBe(500);
      expect(Object.values(usage.graphql).every((entry) => Object.keys(entry.clients).length === 100)).toBe(true);
      expect(usage.graphql['Type7.field']!.clients['client-99']).toEqual({ requests: 1, lastSeen: today(), operations: ['Op'] });
    } finally {
      await database.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
