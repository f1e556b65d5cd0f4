// Attacks of issue 46 on the stores a client can grow (SPEC §0.2), each named for what it tries: huge keys at the rate
// limiter, made-up keys from one address, huge documents at the GraphQL caches, and a flood of WebSocket frames that
// cost a database lookup each. Each proves the store stayed within its bound and another client was served.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { countStatements } from '@users-posts/db';
import type { FastifyInstance } from 'fastify';
import WebSocket from 'ws';
import { createTestApp } from '../support/app.js';
import { createAccount, type Account } from '../support/accounts.js';
import { startApi, type ApiProcess } from '../support/processes.js';
import { listen } from '../support/ws.js';

const MB = 'x'.repeat(1024 * 1000);
const sizeOf = async (app: FastifyInstance, name: string) => app.stores.get(name)!.size();

describe('huge and made-up keys at the rate limiter', () => {
  let app: FastifyInstance;
  let alice: Account;
  beforeAll(async () => {
    app = await createTestApp();
    alice = await createAccount(app, 'alice@example.com');
  });
  afterAll(() => app?.close());

  it('a 1 MB e-mail at forgot and login is counted under a key of fixed size', async () => {
    for (let i = 0; i < 20; i++) {
      const email = `${i}${MB}@example.com`;
      const forgot = await app.inject({ method: 'POST', url: '/auth/password/forgot', payload: { email }, remoteAddress: '203.0.113.1' });
      expect([202, 413, 422, 429]).toContain(forgot.statusCode);
      const login = await app.inject({ method: 'POST', url: '/login', payload: { email, password: 'x' }, remoteAddress: '203.0.113.1' });
      expect([400, 401, 413, 422, 429]).toContain(login.statusCode);
    }
    const { entries, bytes } = await sizeOf(app, 'rate-limit-counters');
    // Fixed-size keys: the counters of 40 requests hold kilobytes, not the 40 MB the e-mails weighed.
    expect(bytes).toBeLessThan(64 * 1024);
    expect(entries).toBeLessThan(100);
  });

  it('a body longer than any valid input of the operation is refused (413) before it is read or counted in a bucket keyed on it', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/login',
      payload: { email: `${MB}@example.com`, password: 'x' },
      remoteAddress: '203.0.113.3',
    });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ code: 41300 });
  });

  it('one address sending 300 made-up e-mails adds keys only up to its per-address budgets', async () => {
    const before = (await sizeOf(app, 'rate-limit-counters')).entries;
    for (let i = 0; i < 300; i++) {
      await app.inject({
        method: 'POST',
        url: '/auth/password/forgot',
        payload: { email: `made-up-${i}@example.com` },
        remoteAddress: '203.0.113.2',
      });
      await app.inject({
        method: 'POST',
        url: '/login',
        payload: { email: `made-up-${i}@example.com`, password: 'x' },
        remoteAddress: '203.0.113.2',
      });
    }
    const added = (await sizeOf(app, 'rate-limit-counters')).entries - before;
    // forgot: its address's key and 20 e-mails (forgot-ip 20/h); login: its address's key and 20 pairs (login-ip 20/min),
    // the per-account guard's failures of those 20, and the default bucket's key: never one key per e-mail sent.
    expect(added).toBeLessThanOrEqual(1 + 1 + 20 + 1 + 20 + 20);
    const other = await app.inject({ method: 'GET', url: `/api/v1/users/${alice.id}`, headers: alice.headers, remoteAddress: '192.0.2.9' });
    expect(other.statusCode).toBe(200);
  });
});

describe('huge documents at the GraphQL caches', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(() => app?.close());

  it('a 1 MB document (a comment and { __typename }) is answered and kept by no cache', async () => {
    for (let i = 0; i < 30; i++) {
      const response = await app.inject({ method: 'POST', url: '/graphql', payload: { query: `# ${i}${MB}\n{ __typename }` } });
      expect(response.json()).toEqual({ data: { __typename: 'Query' } });
    }
    for (const name of ['graphql-parsed-documents', 'graphql-prepared-documents']) {
      const { bytes } = await sizeOf(app, name);
      expect(bytes ?? 0).toBeLessThan(1024 * 1024);
    }
  });
});

describe("a flood of WebSocket subscribe frames past the connection's cap", () => {
  let app: FastifyInstance;
  let alice: Account;
  let url: string;
  beforeAll(async () => {
    app = await createTestApp();
    alice = await createAccount(app, 'alice@example.com');
    url = (await listen(app)).ws;
  });
  afterAll(() => app?.close());

  it('refuses each frame before any database lookup (the probe saw one principal lookup per refused frame)', async () => {
    const socket = new WebSocket(url, 'graphql-transport-ws');
    const messages: { type: string; id?: string; payload?: { extensions?: { code?: string } }[] }[] = [];
    const waiters: (() => void)[] = [];
    socket.on('message', (data) => {
      messages.push(JSON.parse(String(data)) as (typeof messages)[number]);
      for (const wake of waiters.splice(0)) wake();
    });
    const until = async (done: () => boolean) => {
      while (!done()) await new Promise<void>((resolve) => waiters.push(resolve));
    };
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: alice.headers.authorization } }));
    await until(() => messages.some((m) => m.type === 'connection_ack'));
    const subscribe = (id: string) => JSON.stringify({ type: 'subscribe', id, payload: { query: 'subscription { postCreated { id } }' } });
    const cap = app.config.subscriptionLimits.perConnection;
    // The connection's cap is reached (each of these is authorized: a lookup each), and confirmed by one refusal.
    for (let i = 0; i < cap; i++) socket.send(subscribe(`held-${i}`));
    socket.send(subscribe('probe'));
    await until(() => messages.some((m) => m.type === 'error' && m.id === 'probe'));
    const statements = countStatements(app.db);
    const frames = 200;
    for (let i = 0; i < frames; i++) socket.send(subscribe(`flood-${i}`));
    await until(() => messages.filter((m) => m.type === 'error' && m.id?.startsWith('flood-')).length === frames);
    expect(messages.find((m) => m.id === 'flood-0')?.payload?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    expect(statements.count).toBe(0);
    statements.stop();
    socket.close();
  });
});

describe('a server with a 320 MB heap, sent 1 MB e-mails (the probe killed it after 240)', () => {
  let api: ApiProcess;
  beforeAll(async () => {
    api = await startApi({ NODE_OPTIONS: '--max-old-space-size=320' });
  });
  afterAll(() => api?.stop());

  it('stays up and answers another client after 400 of them', async () => {
    const send = (i: number, path: string, body: object) =>
      fetch(`${api.base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
        (r) => r.status,
      );
    for (let i = 0; i < 200; i += 8) {
      const batch = Array.from({ length: 8 }, (_, k) => i + k);
      const statuses = await Promise.all(
        batch.flatMap((n) => [
          send(n, '/auth/password/forgot', { email: `${n}${MB}@example.com` }),
          send(n, '/login', { email: `${n}${MB}@example.com`, password: 'x' }),
        ]),
      );
      for (const status of statuses) expect(status).toBeLessThan(500);
    }
    expect(api.child.exitCode).toBeNull();
    expect((await fetch(`${api.base}/readyz`)).status).toBe(200);
  });
});
