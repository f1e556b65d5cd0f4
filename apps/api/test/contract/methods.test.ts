// A method a known path does not define answers 405 with Allow (RFC 9110 §15.5.6, SPEC §0.3), whatever credential it
// carries (no credential is checked for it); an unknown path answers 404. Every path of openapi.yaml is walked.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { loadOpenapi } from '../../src/contract/openapi-contract.js';
import { createTestApp } from '../support/app.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

/**
 * Each path of the contract with a concrete id for its parameters, and the methods defined for it by every template
 * it matches (`/users/batch` is also `/users/{id}` with an id that is not one: a 400 of that operation, not a 405).
 */
function contractPaths(): { path: string; methods: string[] }[] {
  const { document } = loadOpenapi();
  const templates = Object.entries(document.paths as Record<string, Record<string, unknown>>).map(([template, item]) => ({
    template,
    matches: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    methods: METHODS.filter((method) => method in item).map((method) => method.toUpperCase()),
  }));
  return templates.map(({ template }) => {
    const path = template.replace(/\{[^}]+\}/g, '1');
    return { path, methods: templates.filter(({ matches }) => matches.test(path)).flatMap(({ methods }) => methods) };
  });
}

describe('methods a path does not define', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(() => app?.close());

  it.each(contractPaths())('$path: every other method answers 405 with an Allow naming those it defines', async ({ path, methods }) => {
    for (const method of ['TRACE', 'PUT', 'PATCH', 'DELETE', 'POST', 'GET', 'QUERY']) {
      if (methods.includes(method) || (method === 'GET' && methods.includes('HEAD'))) continue;
      const response = await app.inject({ method: method as 'GET', url: path, headers: { authorization: 'Bearer not-a-token' } });
      expect([method, response.statusCode]).toEqual([method, 405]);
      const allowed = String(response.headers.allow).split(', ');
      for (const defined of methods) expect(allowed).toContain(defined);
      expect(response.json()).toMatchObject({ code: 40500 });
    }
  });

  it('an unknown path answers 404', async () => {
    const response = await app.inject({ method: 'TRACE' as 'GET', url: '/api/v1/nowhere' });
    expect(response.statusCode).toBe(404);
  });
});
