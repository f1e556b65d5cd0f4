// postCreated over WebSocket (graphql-transport-ws, real graphql-ws client) and over SSE, on the app listening on a
// real port: delivery of exactly the selected fields, fan-out, unsubscribe, authentication by connectionParams,
// GraphQL limits on subscribe, and clean closing of sockets and streams when the app closes.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import WebSocket from 'ws';
import { countStatements } from '@users-posts/db/testing';
import { hashPassword } from '../../src/auth/credentials/passwords.js';
import { createTestApp } from '../support/app.js';
import { graphql } from '../support/graphql.js';
import { listen, SseStream, Subscription, watchSubscribers, wsClient } from '../support/ws.js';

const PASSWORD = 'password-123';
const POST_CREATED = 'subscription { postCreated { id title author { name } } }';
const CREATE_POST =
  'mutation Create($title: String!, $content: String!, $authorId: ID!) { createPost(title: $title, content: $content, authorId: $authorId) { id } }';

/** postCreated nested 12 levels deep: over the depth limit of 10. */
const TOO_DEEP = `subscription { postCreated { ${'author { posts { '.repeat(5)}id${' } }'.repeat(5)} } }`;

interface PostCreated {
  postCreated: { id: string; title: string; author: { name: string } };
}

let app: FastifyInstance;
let urls: { http: string; ws: string };
let subscribers: ReturnType<typeof watchSubscribers>;
let author: { id: number; name: string; token: string };
const clients: ReturnType<typeof wsClient>[] = [];

async function account(email: string, name: string) {
  const created = await app.db.prisma.user.create({ data: { name, email, passwordHash: await hashPassword(PASSWORD) } });
  const login = await app.inject({ method: 'POST', url: '/login', payload: { email, password: PASSWORD } });
  expect(login.statusCode).toBe(200);
  return { id: created.id, name, token: login.json().accessToken as string };
}

function client(connectionParams?: Record<string, unknown>) {
  const created = wsClient(urls.ws, connectionParams);
  clients.push(created);
  return created;
}

/** Creates a post through GraphQL createPost as the author (Bearer token) and returns its id. */
async function createPost(title: string): Promise<string> {
  const result = await graphql<{ createPost: { id: string } }>(
    app,
    CREATE_POST,
    { title, content: `Body of ${title}`, authorId: String(author.id) },
    {
      authorization: `Bearer ${author.token}`,
    },
  );
  expect(result.errors).toBeUndefined();
  return result.data!.createPost.id;
}

beforeAll(async () => {
  app = await createTestApp();
  urls = await listen(app);
  subscribers = watchSubscribers(app);
  author = await account('author@example.com', 'Ada Author');
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.dispose()));
  await subscribers.until(0);
});

afterAll(() => app.close());

describe('postCreated over WebSocket (graphql-transport-ws)', () => {
  it('delivers exactly the selected fields of a post created through GraphQL createPost', async () => {
    const subscription = new Subscription<PostCreated>(client({ authorization: `Bearer ${author.token}` }), POST_CREATED);
    await subscribers.until(1);

    const id = await createPost('Hello sockets');

    expect(await subscription.next()).toEqual({ data: { postCreated: { id, title: 'Hello sockets', author: { name: 'Ada Author' } } } });
  });

  it('reads relations afresh for every event: a renamed author shows the new name on the next post', async () => {
    const subscription = new Subscription<PostCreated>(client(), POST_CREATED);
    await subscribers.until(1);
    const first = await createPost('Before the rename');
    expect((await subscription.next()).data?.postCreated).toEqual({ id: first, title: 'Before the rename', author: { name: 'Ada Author' } });

    await app.db.prisma.user.update({ where: { id: author.id }, data: { name: 'Ada Renamed' } });
    try {
      const second = await createPost('After the rename');
      expect((await subscription.next()).data?.postCreated).toEqual({ id: second, title: 'After the rename', author: { name: 'Ada Renamed' } });
    } finally {
      await app.db.prisma.user.update({ where: { id: author.id }, data: { name: author.name } });
    }
  });

  it('looks up the relations of one event once for all its subscribers (one statement, not one per subscriber)', async () => {
    const many = Array.from({ length: 5 }, () => new Subscription<PostCreated>(client(), POST_CREATED));
    await subscribers.until(5);
    const statements = countStatements(app.db);
    try {
      const id = await createPost('Seen by five');
      for (const subscription of many)
        expect((await subscription.next()).data?.postCreated).toEqual({ id, title: 'Seen by five', author: { name: 'Ada Author' } });
      const authorLookups = statements.statements.filter(
        (sql) => /FROM ("public"\.)?"?users"?\s/.test(sql) && /"id" IN|"id" = |id = ANY|id = \$1/.test(sql),
      );
      // The Bearer check of createPost reads the user too: that one, plus one lookup for the five subscribers.
      expect(authorLookups.length).toBe(2);
    } finally {
      statements.stop();
    }
  });

  it('delivers each event to every subscriber', async () => {
    const first = new Subscription<PostCreated>(client(), POST_CREATED);
    const second = new Subscription<PostCreated>(client(), 'subscription { postCreated { title } }');
    await subscribers.until(2);

    const id = await createPost('For both');

    expect((await first.next()).data?.postCreated).toMatchObject({ id, title: 'For both' });
    expect(await second.next()).toEqual({ data: { postCreated: { title: 'For both' } } });
  });

  it('delivers nothing more after unsubscribe, and ends the server-side subscription', async () => {
    const leaving = new Subscription<PostCreated>(client(), POST_CREATED);
    const staying = new Subscription<PostCreated>(client(), POST_CREATED);
    await subscribers.until(2);
    await createPost('Before leaving');
    expect((await leaving.next()).data?.postCreated.title).toBe('Before leaving');
    expect((await staying.next()).data?.postCreated.title).toBe('Before leaving');

    leaving.unsubscribe();
    await subscribers.until(1); // the server returned the stream of the subscription that left
    await createPost('After leaving');

    expect((await staying.next()).data?.postCreated.title).toBe('After leaving');
    expect(leaving.results).toEqual([]);
  });

  it('delivers a post created through REST (POST /api/v1/users/{id}/posts) too', async () => {
    const subscription = new Subscription<PostCreated>(client(), POST_CREATED);
    await subscribers.until(1);

    const response = await app.inject({
      method: 'POST',
      url: `/api/v1/users/${author.id}/posts`,
      headers: { authorization: `Bearer ${author.token}` },
      payload: { title: 'Through REST', content: 'Body' },
    });
    expect(response.statusCode).toBe(201);

    expect(await subscription.next()).toEqual({
      data: { postCreated: { id: String(response.json().data.id), title: 'Through REST', author: { name: 'Ada Author' } } },
    });
  });
});

describe('authentication by connectionParams.authorization', () => {
  it('serves an anonymous subscriber (postCreated is public)', async () => {
    const anonymous = client();
    const subscription = new Subscription<PostCreated>(anonymous, POST_CREATED);
    await subscribers.until(1);
    await createPost('For anyone');
    expect((await subscription.next()).data?.postCreated.title).toBe('For anyone');
    expect(anonymous.closes).toEqual([]);
  });

  it.each([
    ['a token that does not verify', 'Bearer not-a-jwt', 'Invalid access token'],
    ['a value that is not "Bearer <token>"', 'Basic dXNlcjpwYXNz', 'Authorization must be "Bearer <access token>"'],
  ])('refuses %s: close code 4403 with the cause', async (_case, authorization, reason) => {
    const refused = client({ authorization });
    const subscription = new Subscription(refused, POST_CREATED);
    expect(await subscription.failure()).toMatchObject({ code: 4403, reason });
    expect(refused.closes).toEqual([{ code: 4403, reason }]);
    expect(subscribers.active).toBe(0);
  });

  it('refuses an access token revoked by logout, like the HTTP door does', async () => {
    const revoked = await account('leaving@example.com', 'Leaving User');
    const logout = await app.inject({ method: 'POST', url: '/logout', headers: { authorization: `Bearer ${revoked.token}` } });
    expect(logout.statusCode).toBe(204);

    const subscription = new Subscription(client({ authorization: `Bearer ${revoked.token}` }), POST_CREATED);
    expect(await subscription.failure()).toMatchObject({ code: 4403, reason: 'The access token was revoked' });
  });
});

describe('GraphQL rules on subscribe', () => {
  // A live subscription keeps the (lazy) client connected, so a close would be the server's doing.
  async function connectedClient() {
    const shared = client();
    const live = new Subscription<PostCreated>(shared, POST_CREATED);
    await subscribers.until(1);
    return { shared, live };
  }

  it('refuses a too-deep subscription with QUERY_TOO_COMPLEX and keeps the socket open', async () => {
    const { shared, live } = await connectedClient();

    const errors = await new Subscription(shared, TOO_DEEP).failure();
    expect(errors).toEqual([{ message: expect.stringContaining('depth limit of 10'), extensions: { code: 'QUERY_TOO_COMPLEX' } }]);

    await createPost('Still open');
    expect((await live.next()).data?.postCreated.title).toBe('Still open');
    expect(shared.closes).toEqual([]);
    expect(subscribers.active).toBe(1);
  });

  it('reports syntax and validation errors with their codes, without closing the socket', async () => {
    const { shared } = await connectedClient();
    const syntax = await new Subscription(shared, 'subscription { postCreated { id ').failure();
    expect(syntax).toEqual([expect.objectContaining({ extensions: { code: 'GRAPHQL_PARSE_FAILED' } })]);
    const invalid = await new Subscription(shared, 'subscription { postCreated { nope } }').failure();
    expect(invalid).toEqual([
      expect.objectContaining({ message: 'Cannot query field "nope" on type "Post".', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }),
    ]);
    expect(shared.closes).toEqual([]);
  });

  it('answers a query on the same socket as a subscription, which stays open (every operation kind: SPEC §2)', async () => {
    const { shared } = await connectedClient();
    const answer = await shared.iterate({ query: '{ statistics { totalPosts } }' }).next();
    expect(answer.value).toEqual({ data: { statistics: { totalPosts: await app.db.prisma.post.count() } } });
    expect(shared.closes).toEqual([]);
  });
});

describe('postCreated over Server-Sent Events (GET /graphql, Accept: text/event-stream)', () => {
  it('streams the event as an SSE data: line with the selected fields', async () => {
    const query = encodeURIComponent('subscription{postCreated{id title}}');
    const stream = await SseStream.open(`${urls.http}/graphql?query=${query}`);
    try {
      expect(stream.response.status).toBe(200);
      expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      await subscribers.until(1);

      const id = await createPost('Streamed');

      const event = await stream.event();
      expect(event?.event).toBe('next');
      expect(JSON.parse(event!.data)).toEqual({ data: { postCreated: { id, title: 'Streamed' } } });
      expect(stream.lines).toContain(`data: ${JSON.stringify({ data: { postCreated: { id, title: 'Streamed' } } })}`);
    } finally {
      stream.close();
    }
    await subscribers.until(0); // the client going away ends the server-side subscription
  });

  it('applies the GraphQL limits to SSE too: refused with 400 and the error before any stream opens', async () => {
    const response = await fetch(`${urls.http}/graphql?query=${encodeURIComponent(TOO_DEEP)}`, { headers: { accept: 'text/event-stream' } });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await response.json()) as { errors: unknown[] }).errors).toEqual([
      expect.objectContaining({ extensions: { code: 'QUERY_TOO_COMPLEX' } }),
    ]);
  });
});

describe('closing the app', () => {
  it('closes open sockets with 1001, completes SSE streams, and does not hang', async () => {
    const closingApp = await createTestApp();
    const closingUrls = await listen(closingApp);
    const watched = watchSubscribers(closingApp);

    const socketClient = wsClient(closingUrls.ws);
    const subscription = new Subscription(socketClient, POST_CREATED);
    const stream = await SseStream.open(`${closingUrls.http}/graphql?query=${encodeURIComponent('subscription{postCreated{id}}')}`);
    // A raw socket that never subscribes: connected and acknowledged only.
    const raw = new WebSocket(closingUrls.ws, 'graphql-transport-ws');
    const rawClosed = new Promise<{ code: number; reason: string }>((resolve) =>
      raw.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    await new Promise<void>((resolve) => raw.on('open', () => resolve()));
    const acked = new Promise<void>((resolve) => raw.on('message', (data) => JSON.parse(String(data)).type === 'connection_ack' && resolve()));
    raw.send(JSON.stringify({ type: 'connection_init' }));
    await acked;
    await watched.until(2);

    const started = Date.now();
    await closingApp.close();
    expect(Date.now() - started).toBeLessThan(2_000);

    expect(await rawClosed).toEqual({ code: 1001, reason: 'Going away' });
    await subscription.failure(); // the client learns the socket closed (no retries configured)
    expect(socketClient.closes).toEqual([{ code: 1001, reason: 'Going away' }]);
    expect(await stream.event()).toEqual({ event: 'complete', data: '' });
    expect(await stream.event()).toBeNull(); // the response ended
    expect(watched.active).toBe(0);
    await socketClient.dispose();
  });
});
