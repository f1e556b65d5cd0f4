// Trusted documents over every door: hash-only requests (GraphQL-over-HTTP `documentId`, Apollo APQ) on POST, GET,
// WebSocket and SSE; unknown hashes; the allow-list mode refusing ad-hoc documents (and what an attacker tries around
// it) while running the listed ones; and a manifest whose hash does not match its document stopping the start-up.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreatePostDocument, PostCreatedDocument, PostsPageDocument, UserDocument, sha256Hex } from '../../../../packages/client/src/index.js';
import { createTestDatabase } from '@users-posts/db/testing';
import { buildApp } from '../../src/app.js';
import { repoRoot } from '../../src/paths.js';
import { createAccount, type Account } from '../support/accounts.js';
import { createTestApp } from '../support/app.js';
import { testConfig } from '../support/config.js';
import { listen, SseStream, watchSubscribers, wsClient } from '../support/ws.js';

const MANIFEST = path.join(repoRoot, 'packages/client/persisted-documents.json');
const GRAPHQL_JSON = { 'content-type': 'application/json', accept: 'application/graphql-response+json' };
const UNLISTED_HASH = 'f'.repeat(64);

/** The most expensive document the limits allow an ad-hoc client: what allow-list mode must not even parse. */
const AD_HOC_EXPENSIVE = `{ ${Array.from({ length: 15 }, (_, i) => `a${i}: users { posts { author { posts { id } } } }`).join(' ')} }`;

async function post(app: FastifyInstance, payload: unknown, headers: Record<string, string> = {}) {
  const response = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { ...GRAPHQL_JSON, ...headers },
    payload: payload as Record<string, unknown>,
  });
  return {
    status: response.statusCode,
    body: response.json() as { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: { code?: string } }[] },
  };
}
const codesOf = (body: { errors?: { extensions?: { code?: string } }[] }) => body.errors?.map((error) => error.extensions?.code);
const documentId = async (document: string) => `sha256:${await sha256Hex(document)}`;
const apq = async (document: string) => ({ persistedQuery: { version: 1, sha256Hash: await sha256Hex(document) } });

describe('persisted documents beside ad-hoc ones (the default mode, with a manifest)', () => {
  let app: FastifyInstance;
  let author: Account;
  beforeAll(async () => {
    app = await createTestApp({ persistedDocuments: { file: MANIFEST, trustedOnly: false } });
    author = await createAccount(app, 'pd-author@example.com');
  });
  afterAll(() => app.close());

  it("the manifest lists every document of packages/client under its text's SHA-256", async () => {
    const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8')) as Record<string, string>;
    for (const document of [UserDocument, PostsPageDocument, CreatePostDocument, PostCreatedDocument]) {
      expect(manifest[await sha256Hex(document)]).toBe(document);
    }
  });

  it('runs a document sent by hash alone: documentId and APQ, POST and GET', async () => {
    const variables = { id: String(author.id) };
    // Sent without credentials: the author's e-mail reads "" (SPEC §3.1).
    const expected = { user: { id: String(author.id), name: 'pd-author', email: '', role: 'USER', version: 1 } };
    const byId = await post(app, { documentId: await documentId(UserDocument), variables });
    expect(byId).toEqual({ status: 200, body: { data: expected } });
    const byApq = await post(app, { extensions: await apq(UserDocument), variables });
    expect(byApq).toEqual({ status: 200, body: { data: expected } });

    const query = new URLSearchParams({ documentId: await documentId(UserDocument), variables: JSON.stringify(variables) });
    const get = await app.inject({ method: 'GET', url: `/graphql?${query}`, headers: { accept: 'application/graphql-response+json' } });
    expect([get.statusCode, get.json()]).toEqual([200, { data: expected }]);
    const apqQuery = new URLSearchParams({ extensions: JSON.stringify(await apq(UserDocument)), variables: JSON.stringify(variables) });
    const apqGet = await app.inject({ method: 'GET', url: `/graphql?${apqQuery}`, headers: { accept: 'application/graphql-response+json' } });
    expect([apqGet.statusCode, apqGet.json()]).toEqual([200, { data: expected }]);
  });

  it('answers an unknown hash with PERSISTED_QUERY_NOT_FOUND (an APQ client then sends the text), and the text runs', async () => {
    const unknown = await post(app, { extensions: { persistedQuery: { version: 1, sha256Hash: UNLISTED_HASH } } });
    expect(codesOf(unknown.body)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    expect(unknown.body.data).toBeUndefined();
    const byDocumentId = await post(app, { documentId: `sha256:${UNLISTED_HASH}` });
    expect(codesOf(byDocumentId.body)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    const text = await post(app, {
      query: '{ statistics { totalUsers } }',
      extensions: { persistedQuery: { version: 1, sha256Hash: UNLISTED_HASH } },
    });
    expect(text.body).toEqual({ data: { statistics: { totalUsers: 1 } } });
  });
});

describe('GRAPHQL_TRUSTED_DOCUMENTS_ONLY', () => {
  let app: FastifyInstance;
  let urls: { http: string; ws: string };
  let author: Account;
  const postCount = () => app.db.prisma.post.count();

  beforeAll(async () => {
    app = await createTestApp({ persistedDocuments: { file: MANIFEST, trustedOnly: true } });
    author = await createAccount(app, 'trusted-author@example.com');
    urls = await listen(app);
  });
  afterAll(() => app.close());

  it('runs the listed documents, a mutation included, by hash', async () => {
    const before = await postCount();
    const created = await post(
      app,
      { documentId: await documentId(CreatePostDocument), variables: { title: 'Listed', content: 'By hash', authorId: String(author.id) } },
      author.headers,
    );
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({ createPost: { title: 'Listed', author: { id: String(author.id) } } });
    expect(await postCount()).toBe(before + 1);
    const page = await post(app, { extensions: await apq(PostsPageDocument), variables: { first: 5 } });
    expect(page.body.data).toMatchObject({ postsConnection: { totalCount: before + 1 } });
  });

  it('attack: the most expensive ad-hoc document the limits allow is refused unparsed, and an ad-hoc mutation changes nothing', async () => {
    const expensive = await post(app, { query: AD_HOC_EXPENSIVE });
    expect(expensive.status).toBe(400);
    expect(codesOf(expensive.body)).toEqual(['PERSISTED_QUERY_ID_REQUIRED']);
    expect(expensive.body.errors?.[0]?.message).toMatch(/only trusted documents/);

    const before = await postCount();
    const mutation = `mutation { createPost(title: "Ad hoc", content: "x", authorId: "${author.id}") { id } }`;
    const refused = await post(app, { query: mutation }, author.headers);
    expect(codesOf(refused.body)).toEqual(['PERSISTED_QUERY_ID_REQUIRED']);
    const overGet = await app.inject({
      method: 'GET',
      url: `/graphql?query=${encodeURIComponent('{ users { id email } }')}`,
      headers: { accept: 'application/json' },
    });
    expect(overGet.json()).toMatchObject({ errors: [{ extensions: { code: 'PERSISTED_QUERY_ID_REQUIRED' } }] });
    expect(overGet.json()).not.toHaveProperty('data');
    expect(await postCount()).toBe(before);
  });

  it('attack: a listed hash with a text of its own, and an ad-hoc operation in a batch beside a listed one, run nothing ad hoc', async () => {
    const before = await postCount();
    const smuggled = await post(
      app,
      {
        documentId: await documentId(UserDocument),
        query: `mutation { createPost(title: "Smuggled", content: "x", authorId: "${author.id}") { id } }`,
      },
      author.headers,
    );
    expect(codesOf(smuggled.body)).toEqual(['PERSISTED_QUERY_ID_REQUIRED']);

    const batch = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...author.headers },
      payload: [
        { documentId: await documentId(UserDocument), variables: { id: String(author.id) } },
        { query: `mutation { createPost(title: "Batched", content: "x", authorId: "${author.id}") { id } }` },
      ],
    });
    const results = batch.json() as
      { data?: unknown; errors?: { extensions?: { code?: string } }[] }[] | { errors?: { extensions?: { code?: string } }[] };
    // Yoga fails a batch whose one operation is refused before execution as a whole: either way nothing ad hoc ran.
    expect(JSON.stringify(results)).toContain('PERSISTED_QUERY_ID_REQUIRED');
    expect(await postCount()).toBe(before);
  });

  it('answers a hash not in the manifest with PERSISTED_QUERY_NOT_IN_LIST (sending the text would not help)', async () => {
    const unknown = await post(app, { documentId: `sha256:${UNLISTED_HASH}` });
    expect(unknown.status).toBe(400);
    expect(codesOf(unknown.body)).toEqual(['PERSISTED_QUERY_NOT_IN_LIST']);
    const nothing = await post(app, { variables: {} });
    expect(codesOf(nothing.body)).toEqual(['PERSISTED_QUERY_ID_REQUIRED']);
  });

  it('WebSocket: refuses an ad-hoc subscription and serves the listed one by hash', async () => {
    const client = wsClient(urls.ws);
    try {
      const refused = await new Promise<unknown>((resolve) => {
        client.subscribe(
          { query: 'subscription { postCreated { id title author { email } } }' },
          { next: resolve, error: resolve, complete: () => resolve('completed') },
        );
      });
      expect(refused).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'PERSISTED_QUERY_ID_REQUIRED' }) })]);
      const unknown = await new Promise<unknown>((resolve) => {
        client.subscribe(
          { query: '', extensions: { persistedQuery: { version: 1, sha256Hash: UNLISTED_HASH } } },
          { next: resolve, error: resolve, complete: () => resolve('completed') },
        );
      });
      expect(unknown).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'PERSISTED_QUERY_NOT_IN_LIST' }) })]);

      const subscribers = watchSubscribers(app);
      const received = new Promise<unknown>((resolve, reject) => {
        client.subscribe({ query: '', documentId: `sha256:${sha256HexSync(PostCreatedDocument)}` } as { query: string }, {
          next: resolve,
          error: reject,
          complete: () => undefined,
        });
      });
      await subscribers.until(1);
      await post(
        app,
        { documentId: await documentId(CreatePostDocument), variables: { title: 'Over WS', content: 'x', authorId: String(author.id) } },
        author.headers,
      );
      expect(await received).toMatchObject({ data: { postCreated: { title: 'Over WS', author: { id: String(author.id) } } } });
    } finally {
      await client.dispose();
    }
  });

  it('SSE: refuses an ad-hoc subscription with 400 before any stream, and streams the listed one by hash', async () => {
    const adHoc = await SseStream.open(`${urls.http}/graphql?query=${encodeURIComponent('subscription { postCreated { id } }')}`);
    expect(adHoc.response.status).toBe(400);
    expect(JSON.parse(await adHoc.text())).toMatchObject({ errors: [{ extensions: { code: 'PERSISTED_QUERY_ID_REQUIRED' } }] });
    const unknown = await SseStream.open(`${urls.http}/graphql?documentId=sha256:${UNLISTED_HASH}`);
    expect(unknown.response.status).toBe(400);
    expect(JSON.parse(await unknown.text())).toMatchObject({ errors: [{ extensions: { code: 'PERSISTED_QUERY_NOT_IN_LIST' } }] });

    // A POST naming its hash in the URL (as Yoga's plugin reads it) opens its stream too.
    const byUrl = await fetch(`${urls.http}/graphql?documentId=${await documentId(PostCreatedDocument)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({}),
      signal: AbortSignal.timeout(2_000),
    }).catch((error: unknown) => error);
    expect(byUrl instanceof Response ? byUrl.status : String(byUrl)).toBe(200);
    if (byUrl instanceof Response) await byUrl.body?.cancel();

    const subscribers = watchSubscribers(app);
    const stream = await SseStream.open(`${urls.http}/graphql?documentId=${await documentId(PostCreatedDocument)}`);
    try {
      expect(stream.response.status).toBe(200);
      await subscribers.until(1);
      await post(
        app,
        { documentId: await documentId(CreatePostDocument), variables: { title: 'Over SSE', content: 'x', authorId: String(author.id) } },
        author.headers,
      );
      const event = await stream.event();
      expect(event?.event).toBe('next');
      expect(JSON.parse(event!.data)).toMatchObject({ data: { postCreated: { title: 'Over SSE' } } });
    } finally {
      stream.close();
    }
  });
});

describe('the manifest at start-up', () => {
  it('refuses a manifest whose document does not hash to its key (a document altered after it was signed off)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'manifest-'));
    const file = path.join(dir, 'tampered.json');
    writeFileSync(file, JSON.stringify({ [sha256HexSync('{ statistics { totalUsers } }')]: '{ users { id email } }' }));
    const database = await createTestDatabase();
    try {
      await expect(buildApp(testConfig({ persistedDocuments: { file, trustedOnly: true } }), { database })).rejects.toThrow(/does not hash to it/);
    } finally {
      await database.close();
    }
  });
});

/** node:crypto's digest; the client's WebCrypto one (sha256Hex) is what the tests above compare with the manifest. */
const sha256HexSync = (document: string) => createHash('sha256').update(document).digest('hex');
