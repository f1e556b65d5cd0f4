// The drift half of contracts:check against the real app: a contract operation without a handler, or a handler
// without an operation, is reported; the real table is clean.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { createTestApp } from '../../apps/api/test/support/app.js';
import { operationHandlers } from '../../apps/api/src/rest/operations.js';
import { graphqlDrift, restDrift } from '../contracts/drift.js';
import { repoRoot } from '../contracts/generate.js';

let app: FastifyInstance;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const implemented = () => new Set(Object.keys(operationHandlers));

describe('contract drift', () => {
  it('finds none between the app and the contracts', async () => {
    expect(await restDrift(app, repoRoot, implemented())).toEqual([]);
    expect(await graphqlDrift(app, repoRoot)).toEqual([]);
  });

  it('names an operation of the contract that has no handler', async () => {
    const handlers = implemented();
    handlers.delete('getComment');
    expect(await restDrift(app, repoRoot, handlers)).toEqual([
      'getComment (GET /api/v1/comments/{id}) has no handler in apps/api/src/rest/operations.ts',
    ]);
  });

  it('names a handler that matches no operation of the contract', async () => {
    const handlers = implemented().add('archiveUser');
    expect(await restDrift(app, repoRoot, handlers)).toEqual(['handler "archiveUser" matches no operation']);
  });
});
