// Every operation kind over the WebSocket (SPEC §2, issue 33): queries and mutations through an unmodified graphql-ws
// client answer as over HTTP, under the same auth, limits and rate limits (sign-up included); Relay's `node` field; and
// errors answered before GraphQL runs typed `application/graphql-response+json` for a client that accepts only that.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import type { FormattedExecutionResult } from 'graphql';
import type { Client } from 'graphql-ws';
import { createAccount, type Account } from '../support/accounts.js';
import { createTestApp } from '../support/app.js';
import { listen, wsClient } from '../support/ws.js';

let app: FastifyInstance;
let urls: { http: string; ws: string };
let alice: Account;
const clients: Client[] = [];

beforeAll(async () => {
  app = await createTestApp({ rateLimits: { signup: { max: 2, windowMs: 3_600_000 } } });
  urls = await listen(app);
  alice = await createAccount(app, 'alice@example.com');
}, 60_000);
afterAll(async () => {
  await Promise.all(clients.map((client) => client.dispose()));
  await app?.close();
});

/** A graphql-ws client (no retries), disposed after the suite. */
function socket(connectionParams?: Record<string, unknown>): Client {
  const client = wsClient(urls.ws, connectionParams);
  clients.push(client);
  return client;
}

/** One operation over `client`, its single result. */
function run<Data = Record<string, unknown>>(client: Client, query: string, variables?: Record<string, unknown>) {
  return client.iterate<Data>({ query, ...(variables ? { variables } : {}) }).next() as Promise<{ value: FormattedExecutionResult<Data> }>;
}

async function overHttp(query: string, headers: Record<string, string> = {}): Promise<FormattedExecutionResult> {
  const response = await fetch(`${urls.http}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  return (await response.json()) as FormattedExecutionResult;
}

describe('queries and mutations over the WebSocket', () => {
  it('answers a query as POST /graphql does, and the caller of connectionParams is the principal', async () => {
    const query = `{ user(id: "${alice.id}") { id name email } }`;
    const anonymous = await run(socket(), query);
    expect(anonymous.value).toEqual(await overHttp(query));
    expect(anonymous.value.data).toEqual({ user: { id: String(alice.id), name: 'alice', email: '' } }); // SPEC §3.1
    const own = await run(socket({ authorization: `Bearer ${alice.token}` }), '{ currentUser { id email } }');
    expect(own.value).toEqual({ data: { currentUser: { id: String(alice.id), email: 'alice@example.com' } } });
    const refused = await run(socket(), '{ currentUser { id } }');
    expect(refused.value.errors?.map((error) => error.extensions?.code)).toEqual(['UNAUTHENTICATED']);
  });

  it('runs a mutation with the socket’s credential, and refuses one without it, writing nothing', async () => {
    const before = await app.db.prisma.post.count();
    const anonymous = await run(socket(), `mutation { createPost(title: "t", content: "c", authorId: "${alice.id}") { id } }`);
    expect(anonymous.value.errors?.map((error) => error.extensions?.code)).toEqual(['UNAUTHENTICATED']);
    expect(await app.db.prisma.post.count()).toBe(before);
    const created = await run<{ createPost: { title: string } }>(
      socket({ authorization: `Bearer ${alice.token}` }),
      `mutation { createPost(title: "over the socket", content: "c", authorId: "${alice.id}") { title } }`,
    );
    expect(created.value).toEqual({ data: { createPost: { title: 'over the socket' } } });
    expect(await app.db.prisma.post.count()).toBe(before + 1);
  });

  it('attack: sign-ups over a socket count against the same bucket as HTTP (SIGNUP_RATE_LIMIT_MAX=2), nothing written beyond', async () => {
    const client = socket();
    const signUp = (n: number) => run(client, `mutation { createUser(input: { name: "n${n}", email: "ws${n}@example.com" }) { id } }`);
    expect((await signUp(1)).value.errors).toBeUndefined();
    expect((await signUp(2)).value.errors).toBeUndefined();
    const third = await signUp(3);
    expect(third.value.errors?.map((error) => error.extensions?.code)).toEqual(['RATE_LIMITED']);
    expect(await app.db.prisma.user.count({ where: { email: 'ws3@example.com' } })).toBe(0);
  });

  it('attack: a query over the limits is refused over the socket as over HTTP (depth 11: QUERY_TOO_COMPLEX)', async () => {
    const deep = `{ user(id: "1") { ${'posts { author { '.repeat(5)}id${' } }'.repeat(5)} } }`;
    // Refused before execution: graphql-ws's `error` message, which its client throws as the list of errors.
    const thrown = await run(socket(), deep).then(
      () => [],
      (errors: { extensions?: { code?: string } }[]) => errors.map((error) => error.extensions?.code),
    );
    expect(thrown).toEqual(['QUERY_TOO_COMPLEX']);
    expect((await overHttp(deep)).errors?.map((error) => error.extensions?.code)).toEqual(['QUERY_TOO_COMPLEX']);
  });
});

describe("Relay's Global Object Identification", () => {
  it('gives users and posts distinct nodeIds and refetches each by Query.node, under the same privacy', async () => {
    const post = await app.db.prisma.post.create({ data: { title: 'noded', content: 'c', authorId: alice.id } });
    const ids = (await overHttp(`{ user(id: "${alice.id}") { nodeId } post(id: "${post.id}") { nodeId } }`)).data as {
      user: { nodeId: string };
      post: { nodeId: string };
    };
    expect(ids.user.nodeId).not.toBe(ids.post.nodeId);
    const query = `{
      u: node(nodeId: "${ids.user.nodeId}") { __typename nodeId ... on User { id name email } }
      p: node(nodeId: "${ids.post.nodeId}") { __typename nodeId ... on Post { id title author { nodeId } } }
    }`;
    expect((await overHttp(query)).data).toEqual({
      u: { __typename: 'User', nodeId: ids.user.nodeId, id: String(alice.id), name: 'alice', email: '' },
      p: { __typename: 'Post', nodeId: ids.post.nodeId, id: String(post.id), title: 'noded', author: { nodeId: ids.user.nodeId } },
    });
    // The owner sees the e-mail through `node` as through `user`.
    const own = await overHttp(`{ node(nodeId: "${ids.user.nodeId}") { ... on User { email } } }`, { authorization: `Bearer ${alice.token}` });
    expect(own.data).toEqual({ node: { email: 'alice@example.com' } });
  });

  it('answers null for an unknown, foreign or malformed nodeId, never an error', async () => {
    const forged = Buffer.from(JSON.stringify(['Session', 1])).toString('base64');
    const missing = Buffer.from(JSON.stringify(['User', 999_999])).toString('base64');
    const answer = await overHttp(
      `{ a: node(nodeId: "${forged}") { nodeId } b: node(nodeId: "${missing}") { nodeId } c: node(nodeId: "%%%") { nodeId } }`,
    );
    expect(answer).toEqual({ data: { a: null, b: null, c: null } });
  });
});

describe('errors before execution, typed for a client that accepts only application/graphql-response+json', () => {
  it('401 for an expired or forged Bearer token carries extensions.code in that media type', async () => {
    const response = await fetch(`${urls.http}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: 'Bearer not-a-token' },
      body: JSON.stringify({ query: '{ statistics { totalUsers } }' }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
    const body = (await response.json()) as FormattedExecutionResult;
    expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('413 and 415 as well; a client that accepts application/json keeps it', async () => {
    const big = await fetch(`${urls.http}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query: `{ statistics { totalUsers } } # ${'x'.repeat(1_100_000)}` }),
    });
    expect([big.status, big.headers.get('content-type')?.split(';')[0]]).toEqual([413, 'application/graphql-response+json']);
    const unsupported = await fetch(`${urls.http}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', accept: 'application/graphql-response+json' },
      body: '{ statistics { totalUsers } }',
    });
    expect([unsupported.status, unsupported.headers.get('content-type')?.split(';')[0]]).toEqual([415, 'application/graphql-response+json']);
    const legacy = await fetch(`${urls.http}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer not-a-token' },
      body: JSON.stringify({ query: '{ statistics { totalUsers } }' }),
    });
    expect([legacy.status, legacy.headers.get('content-type')?.split(';')[0]]).toEqual([401, 'application/json']);
  });
});
