// Builds the real app on an isolated test database (PGlite copy, or a fresh PostgreSQL schema with DATABASE_URL).
import { createTestDatabase } from '@users-posts/db/testing';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { testConfig, type TestConfigOverrides } from './config.js';

export async function createTestApp(overrides: TestConfigOverrides = {}): Promise<FastifyInstance> {
  const database = await createTestDatabase();
  return buildApp(testConfig(overrides), { database });
}
