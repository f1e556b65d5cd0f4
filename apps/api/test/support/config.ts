// A complete Config for tests: fresh secrets, silent logs, no files written.
import path from 'node:path';
import os from 'node:os';
import type { Config } from '../../src/config/config.js';
import { DEFAULT_COLLECTION_LIMITS } from '../../src/config/collection-limits.js';
import { DEFAULT_GRAPHQL_LIMITS } from '../../src/graphql/guards/limits.js';
import { generateSecrets } from '../../src/config/secrets.js';
import { DEFAULT_STORE_BOUNDS } from '../../src/config/store-bounds.js';

/** Config fields a test may override; the rate-limit buckets one by one (the others keep their defaults). */
export type TestConfigOverrides = Omit<Partial<Config>, 'rateLimits'> & { rateLimits?: Partial<Config['rateLimits']> };

export function testConfig({ rateLimits, ...overrides }: TestConfigOverrides = {}): Config {
  const dataDir = path.join(os.tmpdir(), 'users-posts-test');
  return {
    nodeEnv: 'test',
    exposeErrors: false,
    host: '127.0.0.1',
    port: 0,
    logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
    dataDir,
    pgliteDir: path.join(dataDir, 'pglite'),
    pgliteWasmTierUp: false, // as in production
    databaseUrl: undefined,
    migrateOnStart: false,
    databasePreparedStatements: true,
    redisUrl: undefined,
    graphqlLimits: DEFAULT_GRAPHQL_LIMITS,
    // As in production; TEST_GRAPHQL_FAST_PATH=false runs a suite with every request through Yoga's handler instead.
    graphqlFastPath: process.env.TEST_GRAPHQL_FAST_PATH !== 'false',
    // Compiled from a document's first execution, so every suite's queries take the compiled path;
    // TEST_GRAPHQL_COMPILED_EXECUTION=false runs a suite on graphql-js alone.
    graphqlCompiledExecution: process.env.TEST_GRAPHQL_COMPILED_EXECUTION === 'false' ? false : { afterExecutions: 1 },
    defaultRateLimit: { max: 1000, windowMs: 60_000 },
    rateLimits: {
      loginMax: 10,
      refreshMax: 60,
      loginIpMax: 20,
      loginAccount: { max: 30, windowMs: 900_000 },
      signup: { max: 30, windowMs: 3_600_000 },
      forgotEmailMax: 5,
      forgotIpMax: 20,
      accountTokenMax: 30,
      verifyResendMax: 5,
      ...rateLimits,
    },
    trustProxy: false,
    refreshReuseGraceMs: 0,
    // Tests read /metrics with this token (production reads it only with METRICS_TOKEN or on METRICS_PORT).
    metrics: { token: 'test-metrics-token-0123456789' },
    http: { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, maxConnections: 10_000, sendTimeoutMs: 30_000, maxConnectionsPerAddress: 256 },
    subscriptionLimits: { perConnection: 10, perClient: 50, total: 10_000 },
    secrets: generateSecrets(),
    admin: undefined,
    oauthProviders: [],
    corsOrigins: [],
    requireIfMatch: false,
    idempotencyTtlSeconds: 86_400,
    persistedDocuments: { trustedOnly: false },
    // No mail leaves unless a suite gives an SMTP server (test/support/smtp.ts): no outbox files either.
    mail: { smtpUrl: undefined, from: 'Users & Posts <no-reply@users-posts.test>', publicUrl: 'https://app.users-posts.test' },
    recentAuthMs: 600_000,
    graphiql: true,
    collections: DEFAULT_COLLECTION_LIMITS,
    // Counted as in production, added to the database when a test flushes and at close: no timer adds a statement
    // to a suite that counts them.
    contractUsage: { enabled: true, flushIntervalMs: 3_600_000 },
    storeBounds: DEFAULT_STORE_BOUNDS,
    ...overrides,
  };
}
