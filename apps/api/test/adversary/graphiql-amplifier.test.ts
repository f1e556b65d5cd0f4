// Attack: GraphiQL as an amplifier (issue 31, item 1). An anonymous `GET /graphql` with `Accept: text/html` was a 9.1 MB
// page built and sent in full for every request, uncompressed and uncacheable. Now the page is ~1 KB, and its assets
// are static files, compressed once, cacheable for good and revalidated by ETag; an operator may turn GraphiQL off.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { createHash } from 'node:crypto';
import { createTestApp } from '../support/app.js';

let app: FastifyInstance;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const page = (target: FastifyInstance) => target.inject({ method: 'GET', url: '/graphql', headers: { accept: 'text/html' } });
const assetPaths = (html: string) => [...html.matchAll(/(?:src|href)="(\/graphiql\/[^"]+)"/g)].map((match) => match[1]!);

describe('attack: GraphiQL as an amplifier', () => {
  it('the page an anonymous browser gets is a shell of a few KB naming its assets', async () => {
    const response = await page(app);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.rawPayload.length).toBeLessThan(4096);
    expect(assetPaths(response.body)).toEqual([
      expect.stringMatching(/^\/graphiql\/[0-9a-f]{16}\/favicon\.ico$/),
      expect.stringMatching(/^\/graphiql\/[0-9a-f]{16}\/graphiql\.css$/),
      expect.stringMatching(/\/environment\.js$/),
      expect.stringMatching(/\/graphiql\.js$/),
      expect.stringMatching(/\/start\.js$/),
    ]);
    // No inline script: the page's CSP allows scripts from this server only.
    expect(response.body).not.toMatch(/<script>(?!<\/script>)/);
    expect(response.headers['content-security-policy']).toMatch(/script-src 'self';/);
  });

  it('each asset is compressed (brotli, gzip), cacheable for good, and a revalidation is a 304 with no body', async () => {
    const paths = assetPaths((await page(app)).body);
    for (const path of paths) {
      const plain = await app.inject({ method: 'GET', url: path, headers: { 'accept-encoding': 'identity' } });
      const br = await app.inject({ method: 'GET', url: path, headers: { 'accept-encoding': 'gzip, br' } });
      const gzip = await app.inject({ method: 'GET', url: path, headers: { 'accept-encoding': 'gzip' } });
      for (const response of [plain, br, gzip]) {
        expect(response.statusCode).toBe(200);
        expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
        expect(response.headers.vary).toMatch(/accept-encoding/i);
      }
      expect(br.headers['content-encoding']).toBe('br');
      expect(gzip.headers['content-encoding']).toBe('gzip');
      expect(plain.headers['content-encoding']).toBeUndefined();
      if (path.endsWith('graphiql.js')) {
        expect(plain.rawPayload.length).toBeGreaterThan(1_000_000);
        expect(br.rawPayload.length).toBeLessThan(plain.rawPayload.length / 4);
      }
      const again = await app.inject({ method: 'GET', url: path, headers: { 'accept-encoding': 'br', 'if-none-match': br.headers.etag as string } });
      expect(again.statusCode).toBe(304);
      expect(again.rawPayload.length).toBe(0);
    }
  });

  it('the page has a strong validator (the SHA-256 of its bytes) and a revalidation naming it is a 304 with no body', async () => {
    const first = await page(app);
    const etag = first.headers.etag as string;
    expect(etag).toBe(`"${createHash('sha256').update(first.rawPayload).digest('base64url')}"`);
    expect(first.headers['cache-control']).toBe('no-cache');
    for (const named of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await app.inject({ method: 'GET', url: '/graphql', headers: { accept: 'text/html', 'if-none-match': named } });
      expect([named, again.statusCode, again.rawPayload.length]).toEqual([named, 304, 0]);
      expect(again.headers.etag).toBe(etag);
    }
    const changed = await app.inject({ method: 'GET', url: '/graphql', headers: { accept: 'text/html', 'if-none-match': '"stale"' } });
    expect(changed.statusCode).toBe(200);
    expect(changed.rawPayload.equals(first.rawPayload)).toBe(true);
    // GraphQL answers on the same route carry no page validator.
    const query = await app.inject({ method: 'GET', url: '/graphql?query=%7B__typename%7D', headers: { 'if-none-match': etag } });
    expect(query.statusCode).toBe(200);
    expect(query.headers.etag).toBeUndefined();
  });

  it('an unknown version or file is a 404, not a build of anything', async () => {
    const css = assetPaths((await page(app)).body)[1];
    expect((await app.inject({ method: 'GET', url: css!.replace(/\/[0-9a-f]{16}\//, '/0000000000000000/') })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: css!.replace('graphiql.css', 'secrets.json') })).statusCode).toBe(404);
  });

  it('GRAPHIQL=false: no page and no assets', async () => {
    const off = await createTestApp({ graphiql: false });
    try {
      const response = await page(off);
      expect(response.headers['content-type'] ?? '').not.toMatch(/^text\/html/);
      expect(response.body).not.toMatch(/graphiql/i);
      const css = assetPaths((await page(app)).body)[1];
      expect((await off.inject({ method: 'GET', url: css! })).statusCode).toBe(404);
    } finally {
      await off.close();
    }
  });
});
