// Relations are batched per request: a nested query costs a constant number of SQL statements, not one per row.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { countStatements } from '@users-posts/db/testing';
import type { FastifyInstance } from 'fastify';
import { createTestApp } from '../support/app.js';
import { seedUsersWithPosts } from '../support/fixtures.js';
import { graphql } from '../support/graphql.js';

let app: FastifyInstance;
beforeAll(async () => {
  app = await createTestApp();
  await seedUsersWithPosts(app.db.prisma, 50, 2);
});
afterAll(() => app.close());

const NESTED = '{ users { id posts { id author { name } } } }';

async function statementsFor(query: string): Promise<{ count: number; statements: string[] }> {
  const counter = countStatements(app.db);
  try {
    const result = await graphql(app, query);
    expect(result.errors).toBeUndefined();
    return { count: counter.count, statements: [...counter.statements] };
  } finally {
    counter.stop();
  }
}

describe('GraphQL relation batching', () => {
  it('resolves users → posts → author over 50 users in at most 4 statements', async () => {
    const { count, statements } = await statementsFor(NESTED);
    expect(count).toBeLessThanOrEqual(4);
    expect(statements.join('\n')).toMatch(/"posts"|posts/);
  });

  it('reads each user once: the authors of the listed users’ posts come from the users already read (2 statements)', async () => {
    const { count, statements } = await statementsFor(NESTED);
    expect(count).toBe(2);
    expect(statements.filter((sql) => /FROM ("public"\.)?"?users"?\s/.test(sql))).toHaveLength(1);
  });

  it('costs the same for 5 users as for 50', async () => {
    const few = await statementsFor('{ users(limit: 5) { id posts { id author { name } } } }');
    const many = await statementsFor(NESTED);
    expect(many.count).toBe(few.count);
  });
});
