// Probes and contract serving: /healthz, /readyz (also when the database is gone), /docs, /openapi.*.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import { CORE_SCHEMA, load } from 'js-yaml';

const parse = (text: string) => load(text, { schema: CORE_SCHEMA });
import { openapiPath } from '../../src/paths.js';
import { createTestApp } from '../support/app.js';

let app: FastifyInstance;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

describe('probes', () => {
  it('reports liveness and readiness', async () => {
    expect((await app.inject('/healthz')).json()).toEqual({ status: 'ok' });
    const ready = await app.inject('/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ok', checks: { database: 'up', redis: 'not-configured' } });
  });

  it('reports not ready (503) when the database is closed', async () => {
    const other = await createTestApp();
    await other.db.close();
    const ready = await other.inject('/readyz');
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({ status: 'unavailable', checks: { database: 'down', redis: 'not-configured' } });
    expect((await other.inject('/healthz')).statusCode).toBe(200);
    await other.close();
  });
});

describe('contract documents', () => {
  it('serves openapi.yaml as JSON and as YAML, unchanged', async () => {
    const contract = parse(readFileSync(openapiPath, 'utf8'));
    expect((await app.inject('/openapi.json')).json()).toEqual(contract);
    const yaml = await app.inject('/openapi.yaml');
    expect(yaml.headers['content-type']).toContain('yaml');
    expect(parse(yaml.body)).toEqual(contract);
  });

  it('serves interactive docs at /docs', async () => {
    const page = await app.inject('/docs/');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('swagger-ui');
    const spec = await app.inject('/docs/json');
    expect(spec.json().paths['/api/v1/users']).toBeDefined();
  });

  it('sends a request id on every response, echoing one that was given', async () => {
    expect((await app.inject('/healthz')).headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect((await app.inject({ url: '/healthz', headers: { 'x-request-id': 'abc-123' } })).headers['x-request-id']).toBe('abc-123');
  });
});
