// Versioning (SPEC §4): /api/v1 canonical; /api with no version, ?version=1 or Accept: application/vnd.api.v1+json
// reach the same handlers; an unknown version → 404 in the path, 400 (40001 naming `version`) in the query, 406 in
// the media type.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { sign } from '../../src/auth/credentials/signature.js';
import { createAccount } from '../support/accounts.js';
import { createTestApp } from '../support/app.js';
import { seedUsersWithPosts, type Fixture } from '../support/fixtures.js';

let app: FastifyInstance;
let fixture: Fixture;

beforeAll(async () => {
  app = await createTestApp();
  fixture = await seedUsersWithPosts(app.db.prisma, 3, 0);
});
afterAll(() => app.close());

async function get(url: string, headers: Record<string, string> = {}) {
  const response = await app.inject({ method: 'GET', url, headers });
  return { status: response.statusCode, body: response.json(), headers: response.headers };
}

const V1 = 'application/vnd.api.v1+json';

describe('the same handlers answer', () => {
  it.each([
    ['the canonical path', '/api/v1/users/{id}', {}],
    ['the unversioned path (no version means v1)', '/api/users/{id}', {}],
    ['?version=1', '/api/users/{id}?version=1', {}],
    ['Accept: application/vnd.api.v1+json', '/api/users/{id}', { accept: V1 }],
    ['a vendor type among others in Accept', '/api/users/{id}', { accept: `${V1};q=1, application/json;q=0.5` }],
    ['both ?version=1 and the media type', '/api/users/{id}?version=1', { accept: V1 }],
  ])('on %s', async (_name, template, headers) => {
    const user = fixture.users[1]!;
    const { status, body } = await get(template.replace('{id}', String(user.id)), headers);
    expect(status).toBe(200);
    expect(body).toEqual({ code: 0, message: 'ok', data: expect.objectContaining({ id: user.id, name: user.name, email: '' }) });
  });

  it('with the other query parameters intact, `version` not passed on to the operation', async () => {
    const canonical = await get('/api/v1/users?sort=name&order=desc&fields=id,name&pageSize=2');
    for (const url of [
      '/api/users?sort=name&order=desc&fields=id,name&pageSize=2',
      '/api/users?version=1&sort=name&order=desc&fields=id,name&pageSize=2',
      '/api/users?sort=name&version=1&order=desc&fields=id,name&pageSize=2',
    ]) {
      const response = await get(url);
      expect(response.status).toBe(200);
      expect(response.body).toEqual(canonical.body);
    }
  });

  it('for writes and errors too (201 with the canonical Location; 404 for an unknown id)', async () => {
    const writer = await createAccount(app, 'writer@example.com');
    const created = await app.inject({
      method: 'POST',
      url: `/api/users/${writer.id}/posts?version=1`,
      headers: { ...writer.headers, accept: V1 },
      payload: { title: 'Versioned', content: 'through /api' },
    });
    expect(created.statusCode).toBe(201);
    expect(created.headers.location).toMatch(/^\/api\/v1\//);
    const missing = await get('/api/users/987654', { accept: V1 });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ code: 40400, message: 'User not found' });
  });

  it.each([
    ['the vendor type alone', V1, V1],
    ['the vendor type preferred by quality', `application/json;q=0.5, ${V1}`, V1],
    ['application/json preferred by quality', `${V1};q=0.4, application/json`, 'application/json'],
    ['no vendor type', 'application/json', 'application/json'],
    ['anything', '*/*', 'application/json'],
    ['the vendor type in capitals, with a charset', 'APPLICATION/VND.API.V1+JSON; charset=utf-8', V1],
  ])('labelling the answer with the media type Accept prefers: %s', async (_case, accept, type) => {
    for (const url of ['/api/users', '/api/v1/users', `/api/users/${fixture.users[0]!.id}`]) {
      const { status, headers, body } = await get(url, { accept });
      expect(status).toBe(200);
      expect(headers['content-type']).toBe(`${type}; charset=utf-8`);
      expect(headers.vary).toMatch(/\bAccept\b/); // caches must key on it
      expect(body).toMatchObject({ code: 0, message: 'ok' });
    }
  });

  it('labelling errors the same way (404, 400 naming a parameter, 401)', async () => {
    for (const [url, status] of [
      ['/api/users/987654', 404],
      ['/api/users?pageSize=0', 400],
      ['/api/v1/api-keys', 401],
    ] as const) {
      const answer = await get(url, { accept: V1 });
      expect(answer.status).toBe(status);
      expect(answer.headers['content-type']).toBe(`${V1}; charset=utf-8`);
    }
  });
});

describe('an unknown version', () => {
  it.each(['/api/v9/users', '/api/v2/users/1', '/api/v0/users'])('in the path → 404 in the envelope (%s)', async (url) => {
    const { status, body } = await get(url);
    expect(status).toBe(404);
    expect(body).toEqual({ code: 40400, message: expect.any(String) });
  });

  it.each(['9', '2', 'v1', '', 'abc'])('in the query → 400 code 40001 naming version (?version=%p)', async (version) => {
    const { status, body } = await get(`/api/users?version=${version}`);
    expect(status).toBe(400);
    expect(body).toEqual({ code: 40001, message: expect.any(String), errors: [expect.objectContaining({ field: 'version' })] });
  });

  it('in the query, also next to a good one', async () => {
    const { status, body } = await get('/api/users?version=1&version=2');
    expect(status).toBe(400);
    expect(body.code).toBe(40001);
  });

  it.each(['application/vnd.api.v9+json', 'application/vnd.api.v2+json;q=1, application/json;q=0.1'])(
    'in the media type → 406 code 40600 (%s)',
    async (accept) => {
      const { status, body } = await get('/api/users', { accept });
      expect(status).toBe(406);
      expect(body).toEqual({ code: 40600, message: expect.any(String) });
    },
  );
});

describe('a version that conflicts with the path is refused, not ignored', () => {
  it.each(['2', '9'])('/api/v1/… with ?version=%s → 400 code 40001 naming version', async (version) => {
    const { status, body } = await get(`/api/v1/users?version=${version}`);
    expect(status).toBe(400);
    expect(body).toEqual({ code: 40001, message: expect.any(String), errors: [expect.objectContaining({ field: 'version' })] });
  });

  it('/api/v1/… with Accept: application/vnd.api.v2+json → 406 code 40600', async () => {
    const { status, body } = await get('/api/v1/users/1', { accept: 'application/vnd.api.v2+json' });
    expect(status).toBe(406);
    expect(body).toEqual({ code: 40600, message: expect.stringContaining('/api/v1') });
  });

  it('/api/v1/… with a version that agrees (?version=1, the v1 media type, or none named) is served', async () => {
    expect((await get('/api/v1/users?version=1')).status).toBe(200);
    expect((await get('/api/v1/users', { accept: V1 })).status).toBe(200);
    expect((await get('/api/v1/users', { accept: 'application/json' })).status).toBe(200);
  });
});

describe('other paths are left alone', () => {
  it('the probes, GraphQL and auth endpoints outside /api are not rewritten; /apis is not /api', async () => {
    expect((await get('/healthz')).status).toBe(200);
    expect((await get('/apis/users')).status).toBe(404);
    const graphql = await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ __typename }' } });
    expect(graphql.statusCode).toBe(200);
  });
});

describe('signed requests on the unversioned prefix', () => {
  it('verifies the signature over the path as sent (/api/…), not the rewritten one', async () => {
    const app = await createTestApp();
    const url = `/api/users?timestamp=${Date.now()}&nonce=versioned-1`;
    const signature = sign(app.config.secrets.signing, 'GET', url);
    const response = await app.inject({ method: 'GET', url: `${url}&signature=${signature}` });
    expect(response.statusCode).toBe(200);
    await app.close();
  });
});
