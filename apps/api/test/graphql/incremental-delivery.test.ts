// @defer and @stream (issue 33): incremental delivery over multipart HTTP (Apollo Client 4, unmodified, with its
// 2022-08-24 handler), Server-Sent Events and the WebSocket; under the same limits (a deferred fragment is part of the
// document the limits read); refused with 406, saying what to accept, to a client that takes neither multipart nor SSE.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';
import type { FastifyInstance } from 'fastify';
import type { FormattedExecutionResult } from 'graphql';
import { createAccount, type Account } from '../support/accounts.js';
import { createTestApp } from '../support/app.js';
import { listen, wsClient } from '../support/ws.js';
import { DEFAULT_GRAPHQL_LIMITS } from '../../src/graphql/guards/limits.js';

let app: FastifyInstance;
let urls: { http: string; ws: string };
let alice: Account;

beforeAll(async () => {
  app = await createTestApp();
  urls = await listen(app);
  alice = await createAccount(app, 'alice@example.com');
  await app.db.prisma.user.createMany({ data: ['bob', 'carol'].map((name) => ({ name, email: `${name}@example.com` })) });
  await app.db.prisma.post.createMany({ data: ['first', 'second'].map((title) => ({ title, content: 'c', authorId: alice.id })) });
}, 60_000);
afterAll(() => app?.close());

const DEFERRED = () => `query Deferred { user(id: "${alice.id}") { id name ... @defer(label: "posts") { posts { title } } } }`;

async function post(accept: string, query: string): Promise<Response> {
  return fetch(`${urls.http}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: JSON.stringify({ query }) });
}

describe('@defer', () => {
  it('reaches Apollo Client 4 over multipart HTTP: the user first, then the deferred posts', async () => {
    const client = new ApolloClient({
      link: new HttpLink({ uri: `${urls.http}/graphql` }),
      cache: new InMemoryCache(),
      incrementalHandler: new Defer20220824Handler(),
    });
    type Data = { user: { id: string; name: string; posts?: { title: string }[] } };
    const results: Data[] = [];
    await new Promise<void>((resolve, reject) => {
      const subscription = client.watchQuery<Data>({ query: gql(DEFERRED()) }).subscribe({
        next: (result) => {
          if (result.data) results.push(result.data as Data);
          if ((result.data as Data | undefined)?.user?.posts) {
            subscription.unsubscribe();
            resolve();
          }
        },
        error: reject,
      });
    });
    expect(results[0]).toEqual({ user: { __typename: 'User', id: String(alice.id), name: 'alice' } });
    expect(results.at(-1)?.user.posts?.map((entry) => entry.title)).toEqual(['first', 'second']);
    await client.stop();
  });

  it('streams over Server-Sent Events and the WebSocket as parts', async () => {
    const sse = await (await post('text/event-stream', DEFERRED())).text();
    const parts = sse
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => JSON.parse(line.slice(6)));
    expect(parts).toEqual([
      { data: { user: { id: String(alice.id), name: 'alice' } }, hasNext: true },
      { incremental: [{ data: { posts: [{ title: 'first' }, { title: 'second' }] }, path: ['user'], label: 'posts' }], hasNext: false },
    ]);
    const socket = wsClient(urls.ws);
    const overSocket: unknown[] = [];
    for await (const result of socket.iterate({ query: DEFERRED() })) overSocket.push(result);
    await socket.dispose();
    expect(overSocket).toEqual(parts);
  });

  it('attack: a deferred fragment is no way around the limits (depth 11 inside @defer: QUERY_TOO_COMPLEX, nothing streamed)', async () => {
    const deep = `{ user(id: "${alice.id}") { id ... @defer { ${'posts { author { '.repeat(5)}id${' } }'.repeat(5)} } } }`;
    const response = await post('multipart/mixed, application/graphql-response+json', deep);
    const body = await response.text();
    expect(body).toContain('QUERY_TOO_COMPLEX');
    expect(body).not.toContain('"data"');
  });

  it('refuses with 406, naming the media types, a client that accepts neither multipart nor SSE', async () => {
    const response = await post('application/json', DEFERRED());
    expect(response.status).toBe(406);
    const body = (await response.json()) as FormattedExecutionResult;
    expect(body.errors?.[0]?.message).toMatch(/multipart\/mixed or text\/event-stream/);
  });
});

describe('@stream', () => {
  it('sends the first items of a list at once and the rest as parts', async () => {
    const sse = await (await post('text/event-stream', `{ users(limit: 3) @stream(initialCount: 1) { id } }`)).text();
    const parts = sse
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => JSON.parse(line.slice(6)) as { data?: { users: unknown[] }; incremental?: { items: unknown[] }[] });
    expect(parts[0]?.data?.users).toHaveLength(1);
    expect(
      parts
        .slice(1)
        .flatMap((part) => part.incremental ?? [])
        .flatMap((increment) => increment.items),
    ).toHaveLength(2);
  });
});

describe('the run-time work budget over deferred parts', () => {
  it('attack: deferred work is charged to the request (GRAPHQL_MAX_NODES=4): the part over it carries QUERY_TOO_COMPLEX, not the data', async () => {
    const small = await createTestApp({ graphqlLimits: { ...DEFAULT_GRAPHQL_LIMITS, maxNodes: 4 } });
    try {
      const base = await small.listen({ port: 0, host: '127.0.0.1' });
      const owner = await createAccount(small, 'owner@example.com');
      await small.db.prisma.post.createMany({ data: [1, 2, 3, 4, 5].map((n) => ({ title: `t${n}`, content: 'c', authorId: owner.id })) });
      const response = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query: `{ user(id: "${owner.id}") { id ... @defer { posts { title author { name } } } } }` }),
      });
      const text = await response.text();
      expect(text).toContain('QUERY_TOO_COMPLEX');
      expect(text).not.toContain('"t5"');
    } finally {
      await small.close();
    }
  });
});
