// Contract evolution at run time (SPEC §6, issue 41): deprecation headers of REST operations and parameters, and the
// usage recorded per client over real HTTP, flushed to the database and exported as the gate's usage file.
import { describe, expect, it } from '@jest/globals';
import { countStatements } from '@users-posts/db/testing';
import { mkdtemp, readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { openapiDocument } from '../../src/contract/openapi-contract.js';
import { contractDeprecations, deprecationHooks } from '../../src/rest/deprecation.js';
import { exportUsage, type UsageFile } from '../../../../scripts/contracts-usage.js';
import { useTestApp } from '../support/app.js';

const CHANGELOG_LINK = '<https://app.users-posts.test/docs/changelog>; rel="deprecation"';

describe('deprecated operations and parameters answer with Deprecation, Sunset and Link (RFC 9745, RFC 8594)', () => {
  const suite = useTestApp({
    contractUsage: {
      enabled: true,
      deprecations: {
        getUser: { operation: { sunset: '2099-12-31', deprecatedAt: '2026-01-01' } },
        listUsers: { parameters: { offset: { in: 'query', sunset: '2099-06-30' } } },
      },
    },
  });

  it('a deprecated operation: the moment of deprecation, the sunset day and the changelog', async () => {
    const answer = await suite.app.inject({ method: 'GET', url: `/api/v1/users/${suite.alice.id}` });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers.deprecation).toBe('@1767225600'); // 2026-01-01T00:00:00Z
    expect(answer.headers.sunset).toBe('Thu, 31 Dec 2099 00:00:00 GMT');
    expect(answer.headers.link).toBe(CHANGELOG_LINK);
  });

  it('a deprecated parameter: the headers only when the request uses it; without x-deprecated-at, the sunset day', async () => {
    const without = await suite.app.inject({ method: 'GET', url: '/api/v1/users?limit=1' });
    expect(without.statusCode).toBe(200);
    expect(without.headers).not.toHaveProperty('deprecation');
    expect(without.headers).not.toHaveProperty('sunset');
    const using = await suite.app.inject({ method: 'GET', url: '/api/v1/users?limit=1&offset=1' });
    expect(using.statusCode).toBe(200);
    expect(using.headers.deprecation).toBe(`@${Date.UTC(2099, 5, 30) / 1000}`);
    expect(using.headers.sunset).toBe('Tue, 30 Jun 2099 00:00:00 GMT');
    expect(using.headers.link).toBe(CHANGELOG_LINK);
  });

  it('an operation that is not deprecated answers without them', async () => {
    const answer = await suite.app.inject({ method: 'GET', url: '/api/v1/posts' });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers).not.toHaveProperty('deprecation');
    expect(answer.headers).not.toHaveProperty('sunset');
    expect(answer.headers).not.toHaveProperty('link');
  });

  it('the Link points to a changelog that is served', async () => {
    const answer = await suite.app.inject({ method: 'GET', url: '/docs/changelog' });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(answer.body).toMatch(/^# /);
  });

  it('reads deprecated: true with x-sunset and x-deprecated-at from the contract, on operations and $ref parameters', () => {
    const document = openapiDocument();
    const listPosts = document.paths['/api/v1/posts']!.get as Record<string, unknown>;
    Object.assign(listPosts, { deprecated: true, 'x-sunset': '2099-01-31', 'x-deprecated-at': '2026-11-01' });
    const shared = (document.paths['/api/v1/users'] as unknown as { parameters: { $ref?: string }[] }).parameters;
    const components = (document as unknown as { components: { parameters: Record<string, Record<string, unknown>> } }).components;
    Object.assign(components.parameters[shared[0]!.$ref!.split('/').pop()!]!, { deprecated: true, 'x-sunset': '2099-02-28' });
    const table = contractDeprecations(document);
    expect(table.get('listPosts')?.operation).toEqual({ sunset: '2099-01-31', deprecatedAt: '2026-11-01' });
    expect(table.get('listUsers')?.parameters).toEqual({ version: { sunset: '2099-02-28', in: 'query' } });
    // A deprecation without a date is the gate's to refuse ("sunset"); at run time it has nothing to announce.
    Object.assign(document.paths['/api/v1/posts']!.get as object, { 'x-sunset': undefined });
    expect(contractDeprecations(document).get('listPosts')?.operation).toBeUndefined();
    expect(() => deprecationHooks(document, 'https://x.test/docs/changelog', { getUser: { operation: { sunset: '31/12/2099' } } })).toThrow(
      /getUser x-sunset: not a date/,
    );
  });
});

describe('usage recorded by the running server, per client, exported for the gate (SPEC §6)', () => {
  // A flush only when the test asks (and at close): no timer decides what a test sees.
  const suite = useTestApp({ contractUsage: { enabled: true, flushIntervalMs: 3_600_000 } });

  async function serve(): Promise<string> {
    if (!suite.app.server.listening) await suite.app.listen({ port: 0, host: '127.0.0.1' });
    return `http://127.0.0.1:${(suite.app.server.address() as AddressInfo).port}`;
  }

  async function graphql(base: string, client: string, query: string): Promise<void> {
    const answer = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-client-name': client },
      body: JSON.stringify({ query }),
    });
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { errors?: unknown }).errors).toBeUndefined();
  }

  async function exported(): Promise<UsageFile> {
    await suite.app.contractUsage.flush();
    const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'usage-')), 'contracts/usage.json');
    await exportUsage(suite.app.db.prisma, file, { days: 30 });
    return JSON.parse(await readFile(file, 'utf8')) as UsageFile;
  }

  it('two named clients and an API key over HTTP: the file says who used which operation, parameter and field', async () => {
    const base = await serve();
    const key = await fetch(`${base}/api/v1/api-keys`, {
      method: 'POST',
      headers: { ...suite.alice.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'usage test' }),
    });
    expect(key.status).toBe(201);
    const apiKey = ((await key.json()) as { data: { key: string } }).data.key;

    expect((await fetch(`${base}/api/v1/users?limit=2`, { headers: { 'x-client-name': 'mobile' } })).status).toBe(200);
    expect((await fetch(`${base}/api/v1/posts`, { headers: { 'x-client-name': 'web' } })).status).toBe(200);
    expect((await fetch(`${base}/api/v1/posts`, { headers: { 'x-client-name': 'web' } })).status).toBe(200);
    expect((await fetch(`${base}/api/v1/users/${suite.bob.id}?api_key=${apiKey}`, { headers: { 'x-client-name': 'web' } })).status).toBe(200);
    // A malformed name is not a client: counted as anonymous.
    expect((await fetch(`${base}/api/v1/posts`, { headers: { 'x-client-name': 'no spaces allowed' } })).status).toBe(200);
    await graphql(base, 'mobile', 'query MobileFeed { users(limit: 1) { id name } }');
    await graphql(base, 'web', 'query WebPosts { posts(limit: 1) { id title author { name } } }');
    await graphql(base, 'web', '{ posts(limit: 1) { id } }');

    const usage = await exported();
    expect(usage.format).toBe('users-posts-usage/1');
    expect(usage.windowDays).toBe(30);
    const today = new Date().toISOString().slice(0, 10);
    expect(usage.rest.listUsers).toEqual({
      clients: { mobile: { requests: 1, lastSeen: today } },
      parameters: { limit: { mobile: { requests: 1, lastSeen: today } } },
    });
    expect(usage.rest.listPosts!.clients).toEqual({ web: { requests: 2, lastSeen: today }, anonymous: { requests: 1, lastSeen: today } });
    // The API key's owner, not the header it came with; never an e-mail.
    expect(Object.keys(usage.rest.getUser!.clients)).toEqual([`user:${suite.alice.id}`]);
    expect(JSON.stringify(usage)).not.toMatch(/@example\.com/);
    // A field only mobile used, one only web used, and what both touched.
    expect(usage.graphql['Query.users']).toEqual({ clients: { mobile: { requests: 1, lastSeen: today, operations: ['MobileFeed'] } } });
    expect(usage.graphql['Query.users(limit:)']!.clients).toHaveProperty('mobile');
    expect(usage.graphql['Post.author']).toEqual({ clients: { web: { requests: 1, lastSeen: today, operations: ['WebPosts'] } } });
    expect(usage.graphql['Query.posts']!.clients.web).toEqual({ requests: 2, lastSeen: today, operations: ['WebPosts', 'anonymous-operation'] });
    expect(Object.keys(usage.graphql['User.name']!.clients)).toEqual(['mobile', 'web']);

    // Counts add up across flushes (and so across instances sharing the database).
    expect((await fetch(`${base}/api/v1/users?limit=1`, { headers: { 'x-client-name': 'mobile' } })).status).toBe(200);
    const again = await exported();
    expect(again.rest.listUsers!.clients.mobile!.requests).toBe(2);
    expect(again.rest.listPosts!.clients.web!.requests).toBe(2);
  });

  it('a request costs a Map increment: no SQL statement of the usage per request, one upsert per flush', async () => {
    await suite.app.contractUsage.flush();
    const statements = countStatements(suite.app.db);
    try {
      for (let n = 0; n < 20; n++) {
        const answer = await suite.app.inject({ method: 'GET', url: '/api/v1/users?limit=1', headers: { 'x-client-name': `client-${n % 3}` } });
        expect(answer.statusCode).toBe(200);
        const graphqlAnswer = await suite.app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ users(limit: 1) { id } }' } });
        expect(graphqlAnswer.statusCode).toBe(200);
      }
      expect(statements.statements.filter((sql) => sql.includes('contract_usage'))).toEqual([]);
      await suite.app.contractUsage.flush();
      expect(statements.statements.filter((sql) => sql.includes('contract_usage'))).toHaveLength(1);
    } finally {
      statements.stop();
    }
  });

  it('the last counts reach the database when the server closes', async () => {
    expect((await suite.app.inject({ method: 'GET', url: '/api/v1/posts', headers: { 'x-client-name': 'closing' } })).statusCode).toBe(200);
    // Closing the app closes its database: what the table holds is read just before that, after every other onClose.
    const database = suite.app.db;
    const closeDatabase = database.close.bind(database);
    let recorded: unknown[] = [];
    database.close = async () => {
      recorded = await database.prisma.contractUsage.findMany({ where: { client: 'closing' }, select: { coordinate: true, requests: true } });
      await closeDatabase();
    };
    await suite.app.close();
    expect(recorded).toEqual([{ coordinate: 'listPosts', requests: 1n }]);
  });
});

describe('usage recording under attack and when off', () => {
  const suite = useTestApp({ contractUsage: { enabled: true, flushIntervalMs: 3_600_000 }, defaultRateLimit: { max: 10_000, windowMs: 60_000 } });
  const off = useTestApp({ contractUsage: { enabled: false } });

  it('a flood of invented X-Client-Name values from one address: its share of new names a day, the rest counted as name:other', async () => {
    const health = (client: string, remoteAddress: string) =>
      suite.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-client-name': client }, remoteAddress });
    for (let n = 0; n < 30; n++) expect((await health(`invented-${n}`, '203.0.113.50')).statusCode).toBe(200);
    await suite.app.contractUsage.flush();
    // Another flush window of the same day: no new share (the old bound, 1 000 names per flush, was spent again each time).
    for (let n = 30; n < 40; n++) expect((await health(`invented-${n}`, '203.0.113.50')).statusCode).toBe(200);
    // A name already recorded keeps its place, whoever sends it; a new name from another address has its own share.
    expect((await health('invented-0', '203.0.113.50')).statusCode).toBe(200);
    expect((await health('someone-else', '198.51.100.60')).statusCode).toBe(200);
    await suite.app.contractUsage.flush();
    const rows = await suite.app.db.prisma.contractUsage.findMany({ where: { coordinate: 'getHealth' }, select: { client: true, requests: true } });
    const byClient = Object.fromEntries(rows.map((row) => [row.client, row.requests]));
    expect(Object.keys(byClient).sort()).toEqual(['name:other', 'someone-else', ...Array.from({ length: 10 }, (_, n) => `invented-${n}`)].sort());
    expect(byClient['name:other']).toBe(30n);
    expect(byClient['invented-0']).toBe(2n);
    // Undeclared query parameters are not recorded either: only the names the contract gives the operation.
    await suite.app.inject({ method: 'GET', url: '/api/v1/posts?limit=1&invented=1' });
    await suite.app.contractUsage.flush();
    const parameters = await suite.app.db.prisma.contractUsage.findMany({ where: { kind: 'rest-parameter' }, select: { coordinate: true } });
    expect(parameters.map((row) => row.coordinate)).toEqual(['listPosts?limit']);
  });

  it('CONTRACT_USAGE=false: nothing is counted, nothing written', async () => {
    expect((await off.app.inject({ method: 'GET', url: '/api/v1/posts', headers: { 'x-client-name': 'web' } })).statusCode).toBe(200);
    const graphqlAnswer = await off.app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ posts(limit: 1) { id } }' } });
    expect(graphqlAnswer.json()).toEqual({ data: { posts: expect.any(Array) } });
    await off.app.contractUsage.flush();
    expect(await off.app.db.prisma.contractUsage.count()).toBe(0);
  });
});
