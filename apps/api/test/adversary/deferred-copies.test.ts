// Attack: identical @defer copies of one costly list (issue 40, DEFER-COST). The cost walk merged them as graphql-js
// merges fields, so 1 + 40 copies of a list were costed once and executed 41 times (the executor runs each deferred
// fragment on its own): about 28 700 cost units against GRAPHQL_MAX_COST 5 000. Now each deferred copy costs again,
// and the document is refused with QUERY_TOO_COMPLEX before any SQL, on HTTP (multipart, SSE) and the WebSocket.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { countStatements } from '@users-posts/db/testing';
import type { FastifyInstance } from 'fastify';
import { createAccount, type Account } from '../support/accounts.js';
import { createTestApp } from '../support/app.js';
import { listen, wsClient } from '../support/ws.js';

let app: FastifyInstance;
let urls: { http: string; ws: string };
let owner: Account;

beforeAll(async () => {
  app = await createTestApp();
  urls = await listen(app);
  owner = await createAccount(app, 'owner@example.com');
  await app.db.prisma.post.createMany({ data: [1, 2, 3].map((n) => ({ title: `t${n}`, content: 'c', authorId: owner.id })) });
}, 60_000);
afterAll(() => app?.close());

/** users(100) × (1 + posts(5) × (1 + author)) = 1 100: under the limit once, far over it 41 times. */
const LIST = 'users(limit: 100) { id posts { id author { id } } }';
const copies = (count: number) => Array.from({ length: count }, () => `... @defer { ${LIST} }`).join(' ');

async function post(accept: string, query: string): Promise<{ status: number; text: string; statements: number }> {
  const counter = countStatements(app.db);
  try {
    const response = await fetch(`${urls.http}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept },
      body: JSON.stringify({ query }),
    });
    return { status: response.status, text: await response.text(), statements: counter.count };
  } finally {
    counter.stop();
  }
}

const codesIn = (text: string) => [...text.matchAll(/"code":"([A-Z_]+)"/g)].map((match) => match[1]);

describe('attack: 1 + 40 identical @defer copies of a costly list', () => {
  it.each([
    ['inline fragments', `{ ${LIST} ${copies(40)} }`],
    ['one named fragment spread 40 times', `{ ...L ${Array.from({ length: 40 }, () => '...L @defer').join(' ')} } fragment L on Query { ${LIST} }`],
  ])('%s: QUERY_TOO_COMPLEX over multipart and SSE, before any SQL, nothing streamed', async (_name, query) => {
    for (const accept of ['multipart/mixed, application/graphql-response+json', 'text/event-stream']) {
      const answer = await post(accept, query);
      expect(codesIn(answer.text)).toEqual(['QUERY_TOO_COMPLEX']);
      expect(answer.text).toMatch(/Query cost/);
      expect(answer.text).not.toContain('"data":{');
      expect(answer.statements).toBe(0);
    }
  });

  it('over the WebSocket too: the one error, no part', async () => {
    const socket = wsClient(urls.ws);
    const parts: unknown[] = [];
    try {
      for await (const part of socket.iterate({ query: `{ ${LIST} ${copies(40)} }` })) parts.push(part);
    } catch (error) {
      parts.push(error);
    } finally {
      await socket.dispose();
    }
    expect(codesIn(JSON.stringify(parts))).toEqual(['QUERY_TOO_COMPLEX']);
    expect(JSON.stringify(parts)).not.toContain('"users"');
  });

  it('three copies (4 403 with their parts) stay under the limit and each runs: the list comes four times', async () => {
    const answer = await post('text/event-stream', `{ ${LIST} ${copies(3)} }`);
    expect(codesIn(answer.text)).toEqual([]);
    expect(answer.text.match(/"users":\[/g)).toHaveLength(4);
    // and a fourth copy (5 504) is refused: the copies are counted, not merged
    expect(codesIn((await post('text/event-stream', `{ ${LIST} ${copies(4)} }`)).text)).toEqual(['QUERY_TOO_COMPLEX']);
  });

  it('an ordinary @defer and a depth-10 query over single objects with a deferred part stay accepted', async () => {
    const single = await post(
      'multipart/mixed, application/graphql-response+json',
      `{ user(id: "${owner.id}") { id ... @defer(label: "posts") { posts { title } } } }`,
    );
    expect(single.status).toBe(200);
    expect(codesIn(single.text)).toEqual([]);
    expect(single.text).toContain('"label":"posts"');
    const deep = await post(
      'text/event-stream',
      // Depth 10 as armor counts it (the leaf and the inline fragment count), over single objects but for the posts.
      `{ user(id: "${owner.id}") { posts { author { posts { author { posts { author { ... @defer { posts { id } } } } } } } } } }`,
    );
    expect(codesIn(deep.text)).toEqual([]);
    expect(deep.text).toContain('"hasNext":false');
  });
});
