// Failures of SPEC §4: a body over 1 MiB → 413 (41300), on REST and /graphql; the database gone → 503 (50300)
// quickly, never a hang.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAccount, type Account } from '../support/accounts.js';
import { createTestApp } from '../support/app.js';

const MIB = 1024 * 1024;
const oversized = () => JSON.stringify({ name: 'x'.repeat(MIB), email: 'big@example.com' });

describe('a body over 1 MiB', () => {
  let app: FastifyInstance;

  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(() => app.close());

  it('→ 413 in the error envelope on REST (canonical and unversioned paths), with the rate-limit headers', async () => {
    for (const url of ['/api/v1/users', '/api/users']) {
      const response = await app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: oversized() });
      expect(response.statusCode).toBe(413);
      expect(response.json()).toEqual({ code: 41300, message: expect.any(String) });
      expect(response.headers['x-ratelimit-limit']).toBe('1000');
    }
    expect(await app.db.prisma.user.count({ where: { email: 'big@example.com' } })).toBe(0);
  });

  it('→ 413 on /graphql, in GraphQL error shape', async () => {
    const query = `mutation { createUser(input: {name: "${'x'.repeat(MIB)}", email: "big@example.com"}) { id } }`;
    const response = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ query }),
    });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), extensions: expect.objectContaining({ code: expect.any(String) }) }] });
  });

  it('while a body just under the limit is read (GraphQL: a document is bounded by its tokens, not its bytes)', async () => {
    const body = JSON.stringify({ query: `#${'x'.repeat(MIB - 100)}\n{ __typename }` });
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MIB);
    const response = await app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: body });
    expect(response.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('and a body longer than any valid input of its operation is refused (413) before it is read', async () => {
    const body = JSON.stringify({ name: 'x'.repeat(100_000), email: 'almost@example.com' });
    const response = await app.inject({ method: 'POST', url: '/api/v1/users', headers: { 'content-type': 'application/json' }, payload: body });
    expect(response.statusCode).toBe(413);
  });
});

describe('the database unreachable', () => {
  let app: FastifyInstance;
  let account: Account;

  beforeAll(async () => {
    app = await createTestApp();
    account = await createAccount(app, 'closed@example.com');
    await app.db.close(); // the database goes away under the running app
  });
  afterAll(() => app.close());

  it.each([
    ['GET', '/api/v1/users'],
    ['GET', '/api/v1/users/1'],
    ['GET', '/api/users?version=1'],
    ['GET', '/api/v1/users/1/posts'],
  ] as const)('%s %s → 503 code 50300, quickly', async (method, url) => {
    const started = Date.now();
    const response = await app.inject({ method, url });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({ code: 50300, message: expect.any(String) });
    expect(response.headers['x-ratelimit-limit']).toBe('1000');
  });

  it('an authenticated request (the credential check needs the database too) → 503', async () => {
    const response = await app.inject({
      method: 'POST',
      url: `/api/v1/users/${account.id}/posts`,
      headers: account.headers,
      payload: { title: 'T', content: 'C' },
    });
    expect(response.statusCode).toBe(503);
    expect(response.json().code).toBe(50300);
  });

  it('GraphQL answers too, without hanging', async () => {
    const started = Date.now();
    const response = await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ users { items { id } } }' } });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(response.json().errors).toBeDefined();
  });

  it('/readyz → 503, /healthz stays 200', async () => {
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});

// Found by the bounded fuzz (fuzz.test.ts): Fastify validates a body against the contract only when it comes in a media
// type the contract declares, so a missing body reached the handlers (500) and a text/plain one skipped validation.
describe('a body the contract cannot validate', () => {
  let app: FastifyInstance;
  let account: Account;

  beforeAll(async () => {
    app = await createTestApp();
    account = await createAccount(app, 'bodies@example.com');
  });
  afterAll(() => app.close());

  it.each([
    ['POST', (): string => '/api/v1/users'],
    ['PUT', (): string => `/api/v1/users/${account.id}`],
    ['PATCH', (): string => `/api/v1/users/${account.id}`],
    ['POST', (): string => `/api/v1/users/${account.id}/posts`],
    ['POST', (): string => '/auth/refresh'],
  ] as const)('a required body missing: %s → 400 code 40000, not a 500', async (method, url) => {
    const response = await app.inject({ method, url: url(), headers: account.headers });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ code: 40000, message: expect.stringContaining('body is required') });
  });

  it('a body in a media type the operation does not take (text/plain) → 415 code 41500, and nothing changes', async () => {
    const response = await app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${account.id}`,
      headers: { ...account.headers, 'content-type': 'text/plain' },
      payload: '{"name":"Changed"}',
    });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toEqual({ code: 41500, message: expect.any(String) });
    expect((await app.db.prisma.user.findUniqueOrThrow({ where: { id: account.id } })).name).toBe('bodies');
  });

  it('the optional body of POST /logout may be left out', async () => {
    const response = await app.inject({ method: 'POST', url: '/logout', headers: account.headers });
    expect(response.statusCode).toBe(204);
  });
});

// Found by the bounded fuzz (fuzz.test.ts): failures before routing answered with Fastify's own bodies.
describe('failures before any route runs, in the envelope', () => {
  let app: FastifyInstance;
  let port: number;

  beforeAll(async () => {
    app = await createTestApp();
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
  });
  afterAll(() => app.close());

  it('a bad %-escape in the path → 400 (40000)', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/v1/users/%E0%A4%A' });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ code: 40000, message: expect.any(String) });
  });

  it('a path parameter over 100 characters → 414 (41400)', async () => {
    const response = await app.inject({ method: 'GET', url: `/api/v1/users/${'1'.repeat(150)}` });
    expect(response.statusCode).toBe(414);
    expect(response.json()).toEqual({ code: 41400, message: expect.any(String) });
  });

  it('headers over 16 KiB → 431 (43100) from the HTTP parser, then the server still serves', async () => {
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.get({ host: '127.0.0.1', port, path: '/api/v1/users', headers: { 'x-padding': 'x'.repeat(20_000) } }, (response) => {
        let body = '';
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      request.on('error', reject);
    });
    expect(answer.status).toBe(431);
    expect(JSON.parse(answer.body)).toEqual({ code: 43100, message: 'Request header fields too large' });
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });

  it('/graphql with an Accept or a Content-Type it cannot serve → 406 / 415 with a GraphQL error body', async () => {
    const notAcceptable = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { accept: 'text/html' },
      payload: { query: '{ statistics { totalUsers } }' },
    });
    expect(notAcceptable.statusCode).toBe(406);
    expect(notAcceptable.json()).toEqual({ errors: [{ message: expect.stringMatching(/^Not acceptable/), extensions: { code: 'BAD_USER_INPUT' } }] });
    const unsupported = await app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'text/csv' }, payload: 'query,statistics' });
    expect(unsupported.statusCode).toBe(415);
    expect(unsupported.json().errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });
});

// Found by the bounded fuzz: an answer sent before the body was read left the rest of the body in front of the next
// request on the same keep-alive connection, which then waited forever.
describe('an early answer on a keep-alive connection', () => {
  let app: FastifyInstance;
  let port: number;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  beforeAll(async () => {
    app = await createTestApp();
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    agent.destroy();
    await app.close();
  });

  function post(headers: Record<string, string>, body: Buffer) {
    return new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
      const request = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/api/v1/users',
          agent,
          timeout: 5_000,
          headers: { ...headers, 'content-length': String(body.length) },
        },
        (response) => {
          response.resume();
          response.on('end', () => resolve({ status: response.statusCode ?? 0, connection: response.headers.connection }));
        },
      );
      request.on('timeout', () => request.destroy(new Error('no answer within 5 s')));
      request.on('error', reject);
      request.end(body);
    });
  }

  it('closes the connection after a 415 sent before a 2 MB body was read, so the next request is answered', async () => {
    const early = await post({ 'content-type': '' }, Buffer.alloc(2_300_000, 'a'));
    expect(early).toEqual({ status: 415, connection: 'close' });
    const next = await post({ 'content-type': 'application/json' }, Buffer.from('{"name":"Next"}'));
    expect(next).toEqual({ status: 422, connection: 'keep-alive' });
  });
});
