// Two apps on the same rows, one with compiled execution (compiled at a document's first execution) and one on graphql-js
// alone, and what each answers: for the differential suite of compiled execution and the attacks on its compiler.
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../src/config/config.js';
import { DEFAULT_GRAPHQL_LIMITS } from '../../src/graphql/guards/limits.js';
import { createTestApp } from './app.js';
import { seedUsersWithPosts } from './fixtures.js';

const METRICS_TOKEN = 'test-metrics-token-0123456789';

export interface GraphQLCase {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
}

export interface ExecutorPair {
  compiled: FastifyInstance;
  reference: FastifyInstance;
  close(): Promise<void>;
}

/** Both apps with `maxNodes` as their node budget, 6 users × 3 posts each, every timestamp the same (answers compare). */
export async function executorPair(
  maxNodes: number,
  compiledExecution: Config['graphqlCompiledExecution'] = { afterExecutions: 1 },
): Promise<ExecutorPair> {
  const graphqlLimits = { ...DEFAULT_GRAPHQL_LIMITS, maxNodes };
  const compiled = await createTestApp({ graphqlCompiledExecution: compiledExecution, graphqlLimits });
  const reference = await createTestApp({ graphqlCompiledExecution: false, graphqlLimits });
  for (const app of [compiled, reference]) {
    await seedUsersWithPosts(app.db.prisma, 6, 3);
    const createdAt = new Date('2026-01-02T03:04:05.678Z');
    await app.db.prisma.user.updateMany({ data: { createdAt } });
    await app.db.prisma.post.updateMany({ data: { createdAt } });
  }
  return { compiled, reference, close: async () => void (await Promise.all([compiled.close(), reference.close()])) };
}

/** POST /graphql with one operation: status and body. */
export async function answer(app: FastifyInstance, testCase: GraphQLCase) {
  const { query, variables, operationName } = testCase;
  const response = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { 'content-type': 'application/json' },
    payload: { query, variables, operationName },
  });
  return { status: response.statusCode, body: response.body };
}

/** `graphql_compiled_executions_total` from /metrics: runs answered by the compiled function, and by graphql-js after one. */
export async function answeredBy(app: FastifyInstance): Promise<{ compiled: number; graphqlJs: number }> {
  const response = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const count = (executor: string) =>
    Number(new RegExp(`^graphql_compiled_executions_total\\{answered_by="${executor}"\\} (\\d+)$`, 'm').exec(response.body)?.[1] ?? 0);
  return { compiled: count('compiled'), graphqlJs: count('graphql-js') };
}

/** `app`'s answers to `testCase` sent twice (the first compiles) and which executors answered them. */
export async function twice(app: FastifyInstance, testCase: GraphQLCase) {
  const before = await answeredBy(app);
  const answers = [await answer(app, testCase), await answer(app, testCase)];
  const after = await answeredBy(app);
  return { answers, compiledRuns: after.compiled - before.compiled, reRuns: after.graphqlJs - before.graphqlJs };
}
