// Consumers: the GraphQL clients people use, unmodified, against the real server over real HTTP and WebSocket:
// urql's core client (queries, a mutation with a Bearer token, a typed error), graphql-sse in its distinct connections
// mode (a subscription's events; an invalid subscription reported through `error`, not as data; the single connection
// mode refused with a reason) and graphql-ws.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cacheExchange, Client, fetchExchange, gql } from '@urql/core';
import type { FastifyInstance } from 'fastify';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createTestApp } from '../support/app.js';
import { createAccount, type Account } from '../support/accounts.js';

let app: FastifyInstance;
let base: string;
let alice: Account;

beforeAll(async () => {
  app = await createTestApp();
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  alice = await createAccount(app, 'alice@example.com');
}, 60_000);
afterAll(() => app?.close());

/** Creates a post for alice over REST (what the subscriptions below wait for). */
async function createPost(title: string): Promise<void> {
  const response = await fetch(`${base}/api/v1/users/${alice.id}/posts`, {
    method: 'POST',
    headers: { ...alice.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ title, content: 'from a consumer test' }),
  });
  expect(response.status).toBe(201);
}

describe('@urql/core', () => {
  const client = (token?: string) =>
    new Client({
      url: `${base}/graphql`,
      exchanges: [cacheExchange, fetchExchange],
      fetchOptions: () => (token ? { headers: { authorization: `Bearer ${token}` } } : {}),
    });

  it('queries, mutates with a Bearer token, and reads errors with their codes', async () => {
    const users = await client()
      .query(gql`query Users($limit: Int) { users(limit: $limit) { id name } }`, { limit: 5 })
      .toPromise();
    expect(users.error).toBeUndefined();
    expect(users.data.users).toEqual(expect.arrayContaining([{ __typename: 'User', id: String(alice.id), name: 'alice' }]));

    const created = await client(alice.token)
      .mutation(
        gql`mutation Post($title: String!, $authorId: ID!) { createPost(title: $title, content: "urql", authorId: $authorId) { id title } }`,
        { title: 'By urql', authorId: String(alice.id) },
      )
      .toPromise();
    expect(created.error).toBeUndefined();
    expect(created.data.createPost.title).toBe('By urql');

    const anonymous = await client()
      .query(gql`{ currentUser { id } }`, {})
      .toPromise();
    expect(anonymous.error?.graphQLErrors.map((error) => error.extensions.code)).toEqual(['UNAUTHENTICATED']);
  });
});

describe('graphql-sse (distinct connections mode)', () => {
  const client = (options: { singleConnection?: boolean } = {}) => createSseClient({ url: `${base}/graphql`, retryAttempts: 0, ...options });

  it('delivers a subscription’s events', async () => {
    const sse = client();
    const events: unknown[] = [];
    const done = new Promise<void>((resolve, reject) => {
      const unsubscribe = sse.subscribe(
        { query: 'subscription { postCreated { title } }' },
        {
          next: (event) => {
            events.push(event.data);
            unsubscribe();
            resolve();
          },
          error: reject,
          complete: () => resolve(),
        },
      );
    });
    // The stream is open once the server has answered its headers; a post created before would not be seen.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await createPost('Seen over SSE');
    await done;
    expect(events).toEqual([{ postCreated: { title: 'Seen over SSE' } }]);
    sse.dispose();
  });

  it('reports an invalid subscription through error (400 with the errors), never as data', async () => {
    const sse = client();
    const outcome = await new Promise<{ kind: 'next' | 'error' | 'complete'; value?: unknown }>((resolve) => {
      sse.subscribe(
        { query: 'subscription { nope }' },
        {
          next: (value) => resolve({ kind: 'next', value }),
          error: (value) => resolve({ kind: 'error', value }),
          complete: () => resolve({ kind: 'complete' }),
        },
      );
    });
    expect(outcome.kind).toBe('error');
    // graphql-sse hands over the HTTP answer (its NetworkError): a 400, whose body holds the errors.
    expect((outcome.value as { response?: Response }).response?.status).toBe(400);
    const answer = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'subscription { nope }' }),
    });
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    const { errors } = (await answer.json()) as { errors: { message: string; extensions?: { code?: string } }[] };
    expect(errors[0]!.message).toContain('Cannot query field "nope"');
    expect(errors[0]!.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    sse.dispose();
  });

  it('the single connection mode is refused with a reason (405), through error', async () => {
    const sse = client({ singleConnection: true });
    const outcome = await new Promise<{ kind: string; value?: unknown }>((resolve) => {
      sse.subscribe(
        { query: 'subscription { postCreated { id } }' },
        { next: () => resolve({ kind: 'next' }), error: (value) => resolve({ kind: 'error', value }), complete: () => resolve({ kind: 'complete' }) },
      );
    });
    expect(outcome.kind).toBe('error');
    const reservation = await fetch(`${base}/graphql`, { method: 'PUT' });
    expect(reservation.status).toBe(405);
    expect(reservation.headers.get('allow')).toBe('GET, POST, OPTIONS');
    expect(JSON.stringify(await reservation.json())).toContain('distinct connections mode');
    sse.dispose();
  });
});

describe('graphql-ws', () => {
  it('delivers a subscription’s events over a WebSocket', async () => {
    const ws = createWsClient({ url: `${base.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });
    const iterator = ws.iterate({ query: 'subscription { postCreated { title } }' });
    const first = iterator.next();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await createPost('Seen over WebSocket');
    expect((await first).value?.data).toEqual({ postCreated: { title: 'Seen over WebSocket' } });
    await iterator.return?.();
    await ws.dispose();
  });
});
