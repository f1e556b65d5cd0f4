// Abuse limits (graphql-armor, the cost with list sizes, batching cap) answer QUERY_TOO_COMPLEX before any resolver runs; limits come from config.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_GRAPHQL_LIMITS } from '../../src/graphql/guards/limits.js';
import { BATCHED_SUBSCRIPTION_REFUSAL } from '../../src/graphql/plugin.js';
import { createTestApp } from '../support/app.js';
import { graphql } from '../support/graphql.js';

let app: FastifyInstance;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const nest = (depth: number) => `{ users { ${'posts { author { '.repeat(depth)}id${' } }'.repeat(depth)} } }`;

describe('GraphQL limits', () => {
  it('accepts depth 10 and refuses depth 11 (counted as armor counts it)', async () => {
    // users(1) + n × (posts, author) + id; limit 1 keeps its cost (1 561, see cost.ts) under the cost limit.
    const ok = await graphql(app, '{ users(limit: 1) { posts { author { posts { author { posts { author { posts { author { id } } } } } } } } } }');
    expect(ok.errors).toBeUndefined();
    const deep = await graphql(app, nest(6));
    expect(deep.status).toBe(400);
    expect(deep.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
    expect(deep.data).toBeUndefined();
  });

  it('refuses more than 15 aliases', async () => {
    const aliases = Array.from({ length: 16 }, (_, i) => `a${i}: statistics { totalUsers }`).join(' ');
    const result = await graphql(app, `{ ${aliases} }`);
    expect(result.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
  });

  it('refuses more than 2000 tokens and more than 50 directives', async () => {
    const tokens = await graphql(app, `{ ${Array.from({ length: 700 }, () => 'statistics { totalUsers }').join(' ')} }`);
    expect(tokens.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
    const directives = await graphql(app, `{ statistics { totalUsers ${'@include(if: true) '.repeat(51)} } }`);
    expect(directives.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
  });

  it('refuses a query over the cost limit', async () => {
    // Each alias: users(10) × (1 + posts(5) × (1 + author × (1 + posts(5) × (1 + author)))) = 610.
    const wide = `{ ${Array.from({ length: 4 }, (_, i) => `a${i}: users(limit: 10) { posts { author { posts { author { id } } } } }`).join(' ')} }`;
    expect((await graphql(app, wide)).errors).toBeUndefined(); // 2 440: under the default 5 000
    const cheap = await createTestApp({ graphqlLimits: { ...DEFAULT_GRAPHQL_LIMITS, maxCost: 100 } });
    const result = await graphql(cheap, wide);
    expect(result.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
    expect(result.errors?.[0]?.message).toMatch(/cost/i);
    await cheap.close();
  });

  it('runs nothing when refused: a refused mutation writes nothing', async () => {
    const before = await app.db.prisma.user.count();
    const aliases = Array.from({ length: 16 }, (_, i) => `u${i}: createUser(input: {name: "n${i}", email: "n${i}@example.com"}) { id }`).join(' ');
    const result = await graphql(app, `mutation { ${aliases} }`);
    expect(result.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
    expect(await app.db.prisma.user.count()).toBe(before);
  });

  it('caps batched requests at 10 operations', async () => {
    const batch = (n: number) =>
      app.inject({ method: 'POST', url: '/graphql', payload: Array.from({ length: n }, () => ({ query: '{ statistics { totalUsers } }' })) });
    const ten = await batch(10);
    expect(ten.statusCode).toBe(200);
    expect(ten.json()).toHaveLength(10);
    const eleven = await batch(11);
    expect(eleven.statusCode).toBe(413);
  });

  // (With Accept: text/event-stream Yoga answers a batch as one event stream, which is another answer.)
  it.each(['application/graphql-response+json', 'application/json', '*/*'])(
    "attack (a stream smuggled into a batch, Accept %s): the subscription is refused as the client's input, its neighbours answered, no stream left open",
    async (accept) => {
      const response = await app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { accept },
        payload: [{ query: 'subscription { postCreated { id } }' }, { query: '{ statistics { totalUsers } }' }],
      });
      expect(response.statusCode).toBeLessThan(500);
      const results = response.json() as { data?: unknown; errors?: { message: string; extensions: { code: string } }[] }[];
      expect(results).toHaveLength(2);
      expect(results[0]!.errors).toEqual([
        expect.objectContaining({ message: BATCHED_SUBSCRIPTION_REFUSAL, extensions: { code: 'BAD_USER_INPUT' } }),
      ]);
      expect(results[1]).toMatchObject({ data: { statistics: { totalUsers: expect.any(Number) } } });
      // Nothing subscribed: a plain query still answers at once afterwards.
      expect((await graphql(app, '{ statistics { totalPosts } }')).errors).toBeUndefined();
    },
  );

  it('takes its limits from the config (GRAPHQL_MAX_DEPTH …)', async () => {
    const strict = await createTestApp({ graphqlLimits: { ...DEFAULT_GRAPHQL_LIMITS, maxDepth: 2 } });
    const result = await graphql(strict, '{ users { posts { id } } }');
    expect(result.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
    await strict.close();
  });
});
