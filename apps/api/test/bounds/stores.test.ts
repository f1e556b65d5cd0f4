// Every store a request can grow, enumerated (SPEC §0.2): each declares a bound (app.stores), docs/bounds.md lists
// exactly those, a long-lived container in the source either is one of them or says what bounds it, and a hostile
// client is driven into each store: the bound holds, the process stays up, and another client is served.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_SCHEMA } from '../../src/config/config-schema.js';
import { DEFAULT_STORE_BOUNDS } from '../../src/config/store-bounds.js';
import type { StoreDeclaration } from '../../src/bounds/stores.js';
import { createTestApp } from '../support/app.js';
import { createAccount, TEST_PASSWORD, type Account } from '../support/accounts.js';
import { signedUrl } from '../support/auth.js';
import { testConfig } from '../support/config.js';
import { SmtpSink } from '../support/smtp.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const srcDir = path.resolve(here, '../../src');
const repoRoot = path.resolve(here, '../../../..');

/**
 * A hostile client's run against one store, then the store's own bound checked by the caller: on the suite's app, or on
 * the app the driver returns (one that needs more than the suite's, e.g. an SMTP server), closed afterwards.
 */
type Driver = (app: FastifyInstance, cast: { alice: Account }) => Promise<void | FastifyInstance>;

const HUGE = 'x'.repeat(200_000);
const address = (n: number) => `198.51.${Math.floor(n / 250)}.${(n % 250) + 1}`;
const graphql = (app: FastifyInstance, query: string, remoteAddress = '203.0.113.9') =>
  app.inject({ method: 'POST', url: '/graphql', payload: { query }, remoteAddress });

/** Each declared store's attack; a store declared without one here fails the suite (a new store needs its attack). */
const drivers: Record<string, Driver> = {
  // One address sending huge e-mails to every endpoint keyed on the body's e-mail: its keys are few and short.
  'rate-limit-counters': async (app) => {
    for (let i = 0; i < 40; i++) {
      const email = `${i}${HUGE}@example.com`;
      await app.inject({ method: 'POST', url: '/auth/password/forgot', payload: { email }, remoteAddress: '203.0.113.7' });
      await app.inject({ method: 'POST', url: '/login', payload: { email, password: 'wrong' }, remoteAddress: '203.0.113.7' });
    }
  },
  'graphql-parsed-documents': async (app) => {
    for (let i = 0; i < 60; i++) await graphql(app, `# ${i}${HUGE}\n{ __typename }`);
    for (let i = 0; i < 300; i++) await graphql(app, `query Q${i} { __typename }`);
  },
  'graphql-parse-errors': async (app) => {
    for (let i = 0; i < 60; i++) await graphql(app, `# ${i}${HUGE}\n{ __typename `);
    for (let i = 0; i < 300; i++) await graphql(app, `query Q${i} { __typename `);
  },
  'graphql-prepared-documents': async (app) => {
    for (let i = 0; i < 300; i++) await graphql(app, `query Q${i} { posts(first: 1) { id title } }`);
  },
  'graphql-compiled-documents': async (app) => {
    for (let i = 0; i < 300; i++) await graphql(app, `query C${i} { posts(first: ${(i % 50) + 1}) { id title content } }`);
  },
  // A holder of the signing secret sending more distinct nonces than the store holds: refused (503), never forgotten.
  'signed-request-nonces': async (app, { alice }) => {
    for (let i = 0; i < 8; i++) {
      const response = await app.inject({ method: 'GET', url: signedUrl(app, 'GET', `/api/v1/users/${alice.id}`).url });
      expect(response.statusCode).toBe(i < 5 ? 200 : 503);
    }
  },
  'revoked-access-tokens': async (app) => {
    const account = await createAccount(app, 'revoker@example.com');
    for (let i = 0; i < 7; i++) {
      const login = await app.inject({ method: 'POST', url: '/login', payload: { email: account.email, password: TEST_PASSWORD } });
      const token = login.json().accessToken as string;
      const logout = await app.inject({ method: 'POST', url: '/logout', headers: { authorization: `Bearer ${token}` } });
      expect(logout.statusCode).toBe(i < 5 ? 204 : 503); // the store holds five: the sixth logout is refused, never a revocation forgotten
    }
  },
  // One user logging in over and over (it knows its password): its sign-ins stay within the bound, the oldest ended.
  'sign-ins': async (app) => {
    const account = await createAccount(app, 'frequent@example.com');
    for (let i = 0; i < 6; i++) {
      const login = await app.inject({ method: 'POST', url: '/login', payload: { email: account.email, password: TEST_PASSWORD } });
      expect(login.statusCode).toBe(200);
    }
  },
  'refresh-tokens': async (app) => {
    const account = await createAccount(app, 'refresher@example.com');
    let refreshToken = (await app.inject({ method: 'POST', url: '/login', payload: { email: account.email, password: TEST_PASSWORD } })).json()
      .refreshToken as string;
    for (let i = 0; i < 8; i++) {
      const refreshed = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refreshToken } });
      expect(refreshed.statusCode).toBe(200);
      refreshToken = refreshed.json().refreshToken as string;
    }
  },
  'api-keys': async (app) => {
    const account = await createAccount(app, 'keyholder@example.com');
    const statuses: number[] = [];
    for (let i = 0; i <= 100; i++) {
      const created = await app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: account.headers, payload: { name: `k${i}` } });
      statuses.push(created.statusCode);
    }
    expect(statuses.slice(0, 100).every((status) => status === 201)).toBe(true);
    expect(statuses[100]).toBe(409);
  },
  'account-tokens': async (app) => {
    const account = await createAccount(app, 'forgetful@example.com');
    for (let i = 0; i < 10; i++)
      await app.inject({ method: 'POST', url: '/auth/password/forgot', payload: { email: account.email }, remoteAddress: address(100 + i) });
  },
  'idempotency-records': async (app) => {
    const account = await createAccount(app, 'retrier@example.com');
    for (let i = 0; i < 15; i++) {
      const posted = await app.inject({
        method: 'POST',
        url: `/api/v1/users/${account.id}/posts`,
        headers: { ...account.headers, 'idempotency-key': `key-${i}` },
        payload: { title: `t${i}`, content: 'c' },
      });
      expect(posted.statusCode).toBe(201);
    }
  },
  // One address inventing a client name and an operation name per request (issue 46: ~10 rows a request, without end).
  'contract-usage-tally': async (app) => {
    for (let i = 0; i < 300; i++)
      await app.inject({
        method: 'POST',
        url: '/graphql',
        payload: { query: `query Bot${i} { posts(first: 1) { id title } }` },
        headers: { 'x-client-name': `bot-${i}` },
        remoteAddress: '203.0.113.20',
      });
  },
  'contract-usage-rows': async (app) => {
    for (let i = 0; i < 300; i++)
      await app.inject({
        method: 'GET',
        url: `/api/v1/users?page=1&pageSize=${(i % 20) + 1}`,
        headers: { 'x-client-name': `rest-bot-${i}` },
        remoteAddress: '203.0.113.21',
      });
    await app.contractUsage.flush();
  },
  // Resets asked for made-up addresses from many client addresses, while the SMTP server takes nothing: the queue fills
  // to its bound and the next request is refused (503), never stored past it nor dropped after a 202.
  'mail-outbox': async () => {
    const smtp = await SmtpSink.start();
    smtp.hold = () => true;
    const mailApp = await createTestApp({ mail: { ...testConfig().mail, smtpUrl: smtp.url, outbox: { queueMax: 30, concurrency: 1 } } });
    mailApp.addHook('onClose', async () => smtp.close());
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) {
      const forgot = await mailApp.inject({
        method: 'POST',
        url: '/auth/password/forgot',
        payload: { email: `nobody-${i}@example.com` },
        remoteAddress: address(200 + i),
      });
      statuses.push(forgot.statusCode);
    }
    expect(statuses.filter((status) => status === 202).length).toBeLessThanOrEqual(31);
    expect(statuses.filter((status) => status !== 202).every((status) => status === 503)).toBe(true);
    await createAccount(mailApp, 'alice@example.com');
    return mailApp;
  },
  'known-logins': async (app) => {
    const account = await createAccount(app, 'wanderer@example.com');
    for (let i = 0; i < 8; i++) {
      const login = await app.inject({
        method: 'POST',
        url: '/login',
        payload: { email: account.email, password: TEST_PASSWORD },
        remoteAddress: address(i),
      });
      expect(login.statusCode).toBe(200); // a full store keeps no new pair, and the login still succeeds
    }
  },
};

/** Long-lived containers of the source: empty Maps and Sets at module, plugin or class scope, and every LRU cache. */
function containersWithoutBound(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const file = path.join(dir, name);
      if (statSync(file).isDirectory()) walk(file);
      else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) files.push(file);
    }
  };
  walk(srcDir);
  const found: string[] = [];
  const container = /^( {0,2})[^ ].*new (Map|Set)(<[^()]*>)?\(\)|new LRUCache\b/;
  for (const file of files) {
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, index) => {
      if (!container.test(line)) return;
      if (line.includes('bound:') || (lines[index - 1] ?? '').includes('// bound:')) return;
      found.push(`${path.relative(srcDir, file)}:${index + 1}: ${line.trim()}`);
    });
  }
  return found;
}

describe('every store a request can grow has a declared bound (SPEC §0.2)', () => {
  let app: FastifyInstance;
  let alice: Account;
  beforeAll(async () => {
    app = await createTestApp({
      // The drivers' own logins (every one from the same test address) are not what is limited here.
      rateLimits: { loginMax: 1000, loginIpMax: 1000 },
      // Small bounds, so that a test reaches each of them.
      storeBounds: {
        ...DEFAULT_STORE_BOUNDS,
        rateLimitKeys: 1000,
        documentCacheBytes: 65_536,
        nonces: 5,
        revocations: 5,
        knownLogins: 5,
        signInsPerUser: 3,
        idempotencyKeysPerClient: 10,
        refreshTokensPerSignIn: 2,
      },
    });
    alice = await createAccount(app, 'alice@example.com');
  });
  afterAll(() => app?.close());

  it('finds no long-lived Map, Set or LRU cache in apps/api/src that says nothing of its bound', () => {
    expect(containersWithoutBound()).toEqual([]);
  });

  it('declares each store once, with finite bounds and configuration variables that exist', () => {
    const stores = app.stores.list();
    expect(stores.length).toBeGreaterThanOrEqual(8);
    for (const store of stores) {
      expect(Number.isSafeInteger(store.maxEntries) && store.maxEntries > 0).toBe(true);
      if (store.maxBytes !== undefined) expect(store.maxBytes).toBeGreaterThan(0);
      expect(store.perClient.length).toBeGreaterThan(10);
      expect(store.atBound.length).toBeGreaterThan(10);
      for (const variable of store.config) expect(Object.keys(CONFIG_SCHEMA.properties)).toContain(variable);
    }
  });

  it('documents exactly the declared stores in docs/bounds.md', () => {
    const documented = [...readFileSync(path.join(repoRoot, 'docs/bounds.md'), 'utf8').matchAll(/^\| `([a-z-]+)` \|/gm)].map((match) => match[1]);
    expect([...documented].sort()).toEqual(
      app.stores
        .list()
        .map((store) => store.name)
        .sort(),
    );
  });

  it('has an attack for every declared store', () => {
    expect(
      app.stores
        .list()
        .map((store) => store.name)
        .filter((name) => !(name in drivers)),
    ).toEqual([]);
  });

  describe.each(Object.keys(drivers))('a hostile client driven into %s', (name) => {
    it('leaves the store within its bound, the process up and another client served', async () => {
      const own = await drivers[name]!(app, { alice });
      const target = own ?? app;
      try {
        const store = target.stores.get(name) as StoreDeclaration;
        expect(store).toBeDefined();
        const size = await store.size();
        expect(size.entries).toBeLessThanOrEqual(store.maxEntries);
        if (store.maxBytes !== undefined && size.bytes !== undefined) expect(size.bytes).toBeLessThanOrEqual(store.maxBytes);
        const reader = own
          ? (await target.inject({ method: 'POST', url: '/login', payload: { email: 'alice@example.com', password: TEST_PASSWORD } })).json()
          : undefined;
        const headers = own ? { authorization: `Bearer ${reader.accessToken as string}` } : alice.headers;
        const id = own ? (await target.db.prisma.user.findUniqueOrThrow({ where: { email: 'alice@example.com' } })).id : alice.id;
        const other = await target.inject({ method: 'GET', url: `/api/v1/users/${id}`, headers, remoteAddress: '192.0.2.200' });
        expect(other.statusCode).toBe(200);
      } finally {
        await own?.close();
      }
    });
  });
});
