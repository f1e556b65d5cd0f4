// Attack: the parser's stack (issue 31, item 4). `{ user(id: [[[…5,000 levels…1…]]]) { id } }` is 10 KB, yet it
// overflowed graphql-js's recursive parser before the token limit could apply: INTERNAL_SERVER_ERROR, and a stack trace
// logged twice per request. Now: QUERY_TOO_COMPLEX answered as any syntax error is (GraphQL over HTTP: 200 for
// application/json, 400 for application/graphql-response+json), nothing logged as an error, the server fine.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { MAX_NESTING } from '../../src/graphql/guards/nesting.js';
import { createAuthTestApp } from '../support/auth.js';

const nested = (levels: number) => `{ user(id: ${'['.repeat(levels)}1${']'.repeat(levels)}) { id } }`;

let app: FastifyInstance;
const logged: { level: number; msg: string; err?: { stack?: string } }[] = [];
beforeAll(async () => {
  app = await createAuthTestApp({ config: { logLevel: 'info' }, logDestination: { write: (line: string) => void logged.push(JSON.parse(line)) } });
});
afterAll(() => app.close());

describe('attack: a document nested past the parser stack', () => {
  it.each([
    ['POST', (query: string) => ({ method: 'POST' as const, url: '/graphql', payload: { query } })],
    ['GET', (query: string) => ({ method: 'GET' as const, url: `/graphql?query=${encodeURIComponent(query)}` })],
  ])('%s /graphql: QUERY_TOO_COMPLEX like a syntax error, no stack in the log, the next request answered', async (_method, request) => {
    const before = logged.length;
    const syntaxError = await app.inject(request('{ user(id: [1) { id } }'));
    expect(syntaxError.statusCode).toBeLessThan(500);
    for (const levels of [MAX_NESTING + 1, 5_000, 50_000]) {
      const response = await app.inject(request(nested(levels)));
      expect(response.statusCode).toBe(syntaxError.statusCode);
      expect(response.json().errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'QUERY_TOO_COMPLEX' }) })]);
    }
    const lines = logged.slice(before);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    expect(JSON.stringify(lines)).not.toMatch(/RangeError|Maximum call stack/);
    const fine = await app.inject(request('{ users(limit: 1) { id } }'));
    expect(fine.statusCode).toBe(200);
  });

  it('asked for application/graphql-response+json: 400', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { accept: 'application/graphql-response+json' },
      payload: { query: nested(5_000) },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
  });

  it('a document nested as deep as the limit allows is parsed as usual (and judged by the other limits)', async () => {
    const response = await app.inject({ method: 'POST', url: '/graphql', payload: { query: nested(MAX_NESTING - 2) } });
    expect(response.json().errors?.[0]?.extensions?.code).not.toBe('INTERNAL_SERVER_ERROR');
    expect(response.json().errors?.[0]?.message ?? '').not.toMatch(/nested deeper/);
  });
});
