// Builds the real app on an isolated test database (PGlite copy, or a fresh PostgreSQL schema with DATABASE_URL), alone
// or, for a suite, with its cast (useTestApp).
import { afterAll, beforeAll } from '@jest/globals';
import { createTestDatabase } from '@users-posts/db/testing';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { createCast, type Account } from './accounts.js';
import { testConfig, type TestConfigOverrides } from './config.js';

export async function createTestApp(overrides: TestConfigOverrides = {}): Promise<FastifyInstance> {
  const database = await createTestDatabase();
  return buildApp(testConfig(overrides), { database });
}

/** A suite's app and its cast: two users (alice, bob) and an administrator, each logged in. */
export interface TestApp {
  app: FastifyInstance;
  alice: Account;
  bob: Account;
  admin: Account;
}

/**
 * The suite's fixture: the app and its cast are built before the suite's first test and the app closed after its last.
 * Read the members inside tests and hooks (`suite.app.inject(…)`): they are set once `beforeAll` has run.
 */
export function useTestApp(overrides: TestConfigOverrides = {}): TestApp {
  const suite = {} as TestApp;
  beforeAll(async () => {
    suite.app = await createTestApp(overrides);
    Object.assign(suite, await createCast(suite.app));
  });
  afterAll(() => suite.app?.close());
  return suite;
}
