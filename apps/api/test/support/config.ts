// A complete Config for tests: fresh secrets, silent logs, no files written.
import path from 'node:path';
import os from 'node:os';
import type { Config } from '../../src/config.js';
import { DEFAULT_GRAPHQL_LIMITS } from '../../src/graphql/limits.js';
import { generateSecrets } from '../../src/secrets.js';

export function testConfig(overrides: Partial<Config> = {}): Config {
  const dataDir = path.join(os.tmpdir(), 'users-posts-test');
  return {
    nodeEnv: 'test',
    host: '127.0.0.1',
    port: 0,
    logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
    dataDir,
    pgliteDir: path.join(dataDir, 'pglite'),
    databaseUrl: undefined,
    migrateOnStart: false,
    redisUrl: undefined,
    graphqlLimits: DEFAULT_GRAPHQL_LIMITS,
    defaultRateLimit: { max: 1000, windowMs: 60_000 },
    rateLimits: { loginMax: 10, refreshMax: 60 },
    secrets: generateSecrets(),
    admin: undefined,
    oauthProviders: [],
    corsOrigins: [],
    ...overrides,
  };
}
