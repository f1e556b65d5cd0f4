// Logs (SPEC §5): pino JSON lines carrying the request id, with no credential in them: not the password of a login,
// the access and refresh tokens it returns, a Bearer header, the session cookie, nor an API key sent as ?api_key=.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { bearer, createAuthTestApp, createUser, login, type TestUser } from '../support/auth.js';

let app: FastifyInstance;
let alice: TestUser;
/** Everything the app logged (at `info`), one JSON line per entry. */
const logLines: string[] = [];

beforeAll(async () => {
  app = await createAuthTestApp({ config: { logLevel: 'info' } });
  // Fastify's logger is pino; request loggers are children that inherit the root's destination through the prototype chain.
  (app.log as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] = { write: (line: string) => void logLines.push(line) };
  alice = await createUser(app, { email: 'alice@example.com', password: 'Pa55word-of-alice-0xC0FFEE' });
});
afterAll(() => app.close());

describe('request logs', () => {
  it('carry request ids and none of the secrets a client sent or received', async () => {
    const requestIds: string[] = [];
    const secrets: string[] = [alice.password];
    const track = <T extends { headers: Record<string, unknown> }>(response: T): T => {
      requestIds.push(String(response.headers['x-request-id']));
      return response;
    };

    // A password login: the password goes in, a token pair comes out.
    const pair = track(await login(app, { email: alice.email, password: alice.password }));
    expect(pair.statusCode).toBe(200);
    const { accessToken, refreshToken } = pair.json() as { accessToken: string; refreshToken: string };
    secrets.push(accessToken, refreshToken);
    // A failed login with another password.
    const wrongPassword = 'Wrong-password-0xDEADBEEF';
    secrets.push(wrongPassword);
    expect(track(await login(app, { email: alice.email, password: wrongPassword })).statusCode).toBe(401);

    // A session login: the sid cookie comes out, then goes back in.
    const session = track(await login(app, { email: alice.email, password: alice.password, session: true }));
    expect(session.statusCode).toBe(200);
    const sid = session.cookies.find((cookie) => cookie.name === 'sid')!.value;
    secrets.push(sid);
    expect(track(await app.inject({ method: 'GET', url: '/api/v1/api-keys', cookies: { sid } })).statusCode).toBe(200);

    // A Bearer token, on REST and GraphQL, and one the server rejects.
    expect(track(await app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(accessToken) })).statusCode).toBe(200);
    expect(
      track(await app.inject({ method: 'POST', url: '/graphql', headers: bearer(accessToken), payload: { query: '{ __typename }' } })).statusCode,
    ).toBe(200);
    const forged = `${accessToken.slice(0, -6)}AAAAAA`;
    secrets.push(forged);
    expect(track(await app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(forged) })).statusCode).toBe(401);

    // An API key, created (shown once) and then used as ?api_key=, also on a 404, and a bad one.
    const created = track(await app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: bearer(accessToken), payload: { name: 'logs' } }));
    expect(created.statusCode).toBe(201);
    const key = (created.json() as { data: { key: string } }).data.key;
    secrets.push(key);
    expect(track(await app.inject({ method: 'GET', url: `/api/v1/api-keys?api_key=${encodeURIComponent(key)}` })).statusCode).toBe(200);
    expect(track(await app.inject({ method: 'GET', url: `/no-such-route?api_key=${encodeURIComponent(key)}` })).statusCode).toBe(404);
    expect(track(await app.inject({ method: 'GET', url: '/api/v1/api-keys?api_key=not-a-real-key-0xBADC0DE' })).statusCode).toBe(401);
    secrets.push('not-a-real-key-0xBADC0DE');

    // Refresh and logout send the tokens in bodies and headers once more.
    const refreshed = track(await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refreshToken } }));
    expect(refreshed.statusCode).toBe(200);
    secrets.push((refreshed.json() as { refreshToken: string }).refreshToken);
    expect(track(await app.inject({ method: 'POST', url: '/logout', headers: bearer(accessToken), payload: { refreshToken } })).statusCode).toBe(204);

    expect(logLines.length).toBeGreaterThan(0);
    const entries = logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
    // JSON lines with pino's fields, request lines with the request id and a path stripped of its query string.
    expect(entries.every((entry) => typeof entry.level === 'number' && typeof entry.time === 'number')).toBe(true);
    const logged = logLines.join('\n');
    for (const id of requestIds) expect(logged).toContain(`"reqId":"${id}"`);
    expect(entries.some((entry) => (entry.req as { url?: string } | undefined)?.url === '/no-such-route')).toBe(true);
    for (const secret of secrets) expect(logged).not.toContain(secret);
    expect(logged).not.toContain('api_key');
    expect(logged).not.toMatch(/Bearer /);
  });

  it('redact credential fields when code logs them', () => {
    logLines.length = 0;
    app.log.info(
      { body: { password: 'sekrit-1', accessToken: 'sekrit-2', refreshToken: 'sekrit-3' }, user: { email: 'a@example.com', password: 'sekrit-4' } },
      'credentials in a log call',
    );
    expect(logLines).toHaveLength(1);
    expect(logLines[0]).not.toMatch(/sekrit/);
    expect(logLines[0]).toContain('[redacted]');
  });
});
