// Consumer: Apollo Client 4, unmodified, against the real server (issue 33): an app whose only link is GraphQLWsLink
// (graphql-ws) queries, mutates and subscribes over the socket; and Apollo's error link reads `UNAUTHENTICATED` from
// the 401 an expired token gets over HTTP (typed application/graphql-response+json, which Apollo asks for first).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { CombinedGraphQLErrors } from '@apollo/client/errors';
import { ErrorLink } from '@apollo/client/link/error';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import type { FastifyInstance } from 'fastify';
import { createClient } from 'graphql-ws';
import { createHmac } from 'node:crypto';
import WebSocket from 'ws';
import { createAccount, type Account } from '../support/accounts.js';
import { createTestApp } from '../support/app.js';
import { listen, watchSubscribers } from '../support/ws.js';

let app: FastifyInstance;
let urls: { http: string; ws: string };
let alice: Account;
let subscribers: ReturnType<typeof watchSubscribers>;

beforeAll(async () => {
  app = await createTestApp();
  subscribers = watchSubscribers(app);
  urls = await listen(app);
  alice = await createAccount(app, 'alice@example.com');
}, 60_000);
afterAll(() => app?.close());

/** alice's access token as it reads once expired: the same claims, `exp` an hour ago, signed with the server's secret. */
function expiredToken(): string {
  const [header, payload] = alice.token.split('.') as [string, string];
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, number>;
  const now = Math.floor(Date.now() / 1000);
  const body = `${header}.${Buffer.from(JSON.stringify({ ...claims, iat: now - 7200, exp: now - 3600 })).toString('base64url')}`;
  return `${body}.${createHmac('sha256', app.config.secrets.jwtAccess).update(body).digest('base64url')}`;
}

describe('Apollo Client 4', () => {
  it('with GraphQLWsLink as its only link: queries, mutates and subscribes over the WebSocket', async () => {
    const socket = createClient({
      url: urls.ws,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${alice.token}` },
    });
    const client = new ApolloClient({ link: new GraphQLWsLink(socket), cache: new InMemoryCache() });
    try {
      const me = await client.query<{ currentUser: { id: string; name: string } }>({ query: gql`query Me { currentUser { id name } }` });
      expect(me.data?.currentUser).toEqual({ __typename: 'User', id: String(alice.id), name: 'alice' });

      const events: string[] = [];
      const subscribed = new Promise<void>((resolve, reject) => {
        const subscription = client
          .subscribe<{ postCreated: { title: string } }>({ query: gql`subscription { postCreated { id title } }` })
          .subscribe({
            next: ({ data }) => {
              events.push(data!.postCreated.title);
              subscription.unsubscribe();
              resolve();
            },
            error: reject,
          });
      });
      // The subscription is registered once the server counts its subscriber (no sleep).
      await subscribers.until(1);
      const created = await client.mutate<{ createPost: { title: string } }>({
        mutation: gql`mutation Write($author: ID!) { createPost(title: "by Apollo over ws", content: "c", authorId: $author) { id title } }`,
        variables: { author: String(alice.id) },
      });
      expect(created.data?.createPost.title).toBe('by Apollo over ws');
      await subscribed;
      expect(events).toEqual(['by Apollo over ws']);
    } finally {
      await client.stop();
      await socket.dispose();
    }
  });

  it('reads UNAUTHENTICATED in its error link when the access token has expired (HTTP 401)', async () => {
    const codes: unknown[] = [];
    const errors = new ErrorLink(({ error }) => {
      if (CombinedGraphQLErrors.is(error)) codes.push(...error.errors.map((entry) => entry.extensions?.code));
    });
    const http = new HttpLink({ uri: `${urls.http}/graphql`, headers: { authorization: `Bearer ${expiredToken()}` } });
    const client = new ApolloClient({ link: errors.concat(http), cache: new InMemoryCache() });
    const result = await client.query({ query: gql`query Me { currentUser { id } }`, errorPolicy: 'all' });
    expect(codes).toEqual(['UNAUTHENTICATED']);
    expect(CombinedGraphQLErrors.is(result.error)).toBe(true);
  });
});
