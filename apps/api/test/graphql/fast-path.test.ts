// The GraphQL fast path (graphql/http-fast-path.ts) answers exactly as Yoga's handler does: the same status, content
// type and body for every kind of request, and the GraphQL-over-HTTP audit (graphql-http) passes the same on both.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { serverAudits } from 'graphql-http';
import { hashPassword } from '../../src/auth/credentials/passwords.js';
import { createTestApp } from '../support/app.js';
import { seedUsersWithPosts } from '../support/fixtures.js';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { UserDocument } from '../../../../packages/client/src/index.js';
import { repoRoot } from '../../src/paths.js';

const MANIFEST = path.join(repoRoot, 'packages/client/persisted-documents.json');
const hashOf = (document: string) => createHash('sha256').update(document).digest('hex');

let fast: FastifyInstance;
let yoga: FastifyInstance;
let adminToken: string;

async function login(app: FastifyInstance): Promise<string> {
  await app.db.prisma.user.update({ where: { email: 'user1@example.com' }, data: { passwordHash: await hashPassword('fast-path-password') } });
  const response = await app.inject({ method: 'POST', url: '/login', payload: { email: 'user1@example.com', password: 'fast-path-password' } });
  return (response.json() as { accessToken: string }).accessToken;
}

beforeAll(async () => {
  // Both with the client's manifest: documents sent by hash take the fast path too.
  fast = await createTestApp({ graphqlFastPath: true, persistedDocuments: { file: MANIFEST, trustedOnly: false } });
  yoga = await createTestApp({ graphqlFastPath: false, persistedDocuments: { file: MANIFEST, trustedOnly: false } });
  // The same rows in both (fresh databases: the same ids), user 1 an ADMIN.
  await seedUsersWithPosts(fast.db.prisma, 5, 2);
  await seedUsersWithPosts(yoga.db.prisma, 5, 2);
  adminToken = await login(fast);
}, 60_000);
afterAll(async () => {
  await fast?.close();
  await yoga?.close();
});

interface Case {
  name: string;
  payload: unknown;
  headers?: Record<string, string>;
  authenticated?: boolean;
  // Only these Accept values (a subscription under any-type Accept is an endless SSE stream, on both paths).
  accepts?: (string | undefined)[];
}

const json = { 'content-type': 'application/json' };
const cases: Case[] = [
  { name: 'a query by id', payload: { query: '{ user(id: "2") { id name email } }' } },
  { name: 'a nested query', payload: { query: '{ users(limit: 3) { id name posts { id title author { name } } } }' } },
  {
    name: 'variables and operationName',
    payload: { query: 'query A($id: ID!) { user(id: $id) { name } } query B { users { id } }', variables: { id: '3' }, operationName: 'A' },
  },
  { name: 'a persisted document by documentId', payload: { documentId: `sha256:${hashOf(UserDocument)}`, variables: { id: '2' } } },
  {
    name: 'a persisted document by APQ hash',
    payload: { extensions: { persistedQuery: { version: 1, sha256Hash: hashOf(UserDocument) } }, variables: { id: '3' } },
  },
  { name: 'an unknown persisted hash', payload: { documentId: `sha256:${'0'.repeat(64)}` } },
  {
    name: 'a listed hash beside a query that is not a string',
    payload: { documentId: `sha256:${hashOf(UserDocument)}`, query: 1, variables: { id: '2' } },
  },
  {
    name: 'an APQ hash beside another extension',
    payload: { extensions: { persistedQuery: { version: 1, sha256Hash: hashOf(UserDocument) }, other: true }, variables: { id: '2' } },
  },
  { name: 'a missing user (null)', payload: { query: '{ user(id: "999") { id } }' } },
  { name: 'a syntax error', payload: { query: '{ users { id ' } },
  { name: 'a validation error', payload: { query: '{ users { nope } }' } },
  { name: 'a variable of the wrong type', payload: { query: 'query ($n: Int) { users(limit: $n) { id } }', variables: { n: 'x' } } },
  { name: 'a missing required variable', payload: { query: 'query ($id: ID!) { user(id: $id) { id } }' } },
  { name: 'an operationName that picks nothing', payload: { query: '{ users { id } }', operationName: 'Nope' } },
  { name: 'two operations and no operationName', payload: { query: 'query A { users { id } } query B { users { id } }' } },
  { name: 'a resolver error (invalid argument)', payload: { query: '{ users(limit: -1) { id } }' } },
  { name: 'a non-null root field that fails (currentUser, anonymous)', payload: { query: '{ currentUser { id } }' } },
  { name: 'an anonymous mutation (UNAUTHENTICATED)', payload: { query: 'mutation { createPost(title: "t", content: "c", authorId: "1") { id } }' } },
  { name: 'an authenticated mutation', payload: { query: 'mutation { deleteUser(id: "5") }' }, authenticated: true },
  { name: 'over the cost limit', payload: { query: '{ users(limit: 1000) { posts { author { posts { author { posts { id } } } } } } }' } },
  {
    name: 'over the depth limit',
    payload: { query: '{ users { posts { author { posts { author { posts { author { posts { author { posts { author { id } } } } } } } } } } }' },
  },
  {
    name: 'over the alias limit (armor throws from validation)',
    payload: { query: `{ ${Array.from({ length: 16 }, (_, i) => `a${i}: statistics { totalUsers }`).join(' ')} }` },
  },
  // Found by an attacker's review: a plugin that throws before execution (the cost check meets `@include(if: null)`).
  {
    name: 'a null variable for @include (thrown before execution)',
    payload: { query: 'query ($a: Boolean = true) { users(limit: 1) @include(if: $a) { id } }', variables: { a: null } },
  },
  {
    name: 'a null variable for @skip in a mutation',
    payload: { query: 'mutation ($a: Boolean = true) { deleteUser(id: "5") @skip(if: $a) }', variables: { a: null } },
  },
  // Content-Types Yoga's parser does not take as JSON (case, space before the parameters, a tab).
  ...[
    'Application/json',
    'application/json ; charset=utf-8',
    'application/json\t;charset=utf-8',
    'APPLICATION/JSON',
    'application/json;charset=utf-8',
  ].map((type) => ({
    name: `Content-Type ${JSON.stringify(type)}`,
    payload: { query: '{ user(id: "2") { id name } }' },
    headers: { 'content-type': type },
  })),
  { name: 'introspection', payload: { query: '{ __schema { queryType { name } } }' } },
  { name: 'an unknown parameter', payload: { query: '{ users { id } }', nope: 1 } },
  { name: 'extensions', payload: { query: '{ users { id } }', extensions: { a: 1 } } },
  { name: 'variables that are not an object', payload: { query: '{ users { id } }', variables: [1] } },
  { name: 'a batch', payload: [{ query: '{ user(id: "1") { id } }' }, { query: '{ user(id: "2") { id } }' }] },
  { name: 'a query that is not a string', payload: { query: 42 } },
  {
    name: 'a subscription over POST',
    payload: { query: 'subscription { postCreated { id } }' },
    accepts: ['application/json', 'application/graphql-response+json', 'application/xml'],
  },
];
const accepts = [
  undefined,
  '*/*',
  'application/json',
  'application/graphql-response+json',
  'application/graphql-response+json, application/json;q=0.9',
  'application/json, application/graphql-response+json',
  'application/json; charset=iso-8859-1',
  'application/xml',
];

async function answer(app: FastifyInstance, testCase: Case, accept: string | undefined, token?: string) {
  const response = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { ...json, ...(accept ? { accept } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}), ...testCase.headers },
    payload: JSON.stringify(testCase.payload),
  });
  return { status: response.statusCode, type: response.headers['content-type'], body: response.body };
}

describe('the GraphQL fast path answers as Yoga does', () => {
  it.each(cases.filter((c) => !c.authenticated).map((c) => [c.name, c] as const))('%s, under every Accept', async (_name, testCase) => {
    for (const accept of testCase.accepts ?? accepts) {
      const [mine, theirs] = [await answer(fast, testCase, accept), await answer(yoga, testCase, accept)];
      expect({ accept, ...mine }).toEqual({ accept, ...theirs });
    }
  });

  it('keeps choosing as Yoga does past the Accept headers it remembers (a client varying the header on every request)', async () => {
    const testCase = cases.find((c) => !c.authenticated && !c.accepts)!;
    for (let i = 0; i < 150; i++) {
      const accept = i % 3 ? `application/graphql-response+json;q=0.${i % 10}, application/json;q=0.${(i + 5) % 10}` : `application/xml;v=${i}`;
      const [mine, theirs] = [await answer(fast, testCase, accept), await answer(yoga, testCase, accept)];
      expect({ accept, ...mine }).toEqual({ accept, ...theirs });
    }
  });

  it('an authenticated mutation (each app its own token; the same answer and the same change)', async () => {
    const testCase = cases.find((c) => c.authenticated)!;
    const yogaToken = await login(yoga);
    const [mine, theirs] = [await answer(fast, testCase, undefined, adminToken), await answer(yoga, testCase, undefined, yogaToken)];
    expect(mine).toEqual(theirs);
    expect(mine.body).toContain('"deleteUser":true');
    expect(await fast.db.prisma.user.count()).toBe(await yoga.db.prisma.user.count());
    // Run once, not once here and again by Yoga: a second deletion would have answered NOT_FOUND.
    const created = await answer(
      fast,
      { name: 'create', payload: { query: 'mutation { createPost(title: "once", content: "c", authorId: "1") { id } }' } },
      undefined,
      adminToken,
    );
    expect(created.status).toBe(200);
    expect(await fast.db.prisma.post.count({ where: { title: 'once' } })).toBe(1);
  });

  it('passes the GraphQL-over-HTTP audit (graphql-http) with the same results as Yoga', async () => {
    const results: Record<string, string[]> = {};
    for (const [name, app] of [
      ['fast', fast],
      ['yoga', yoga],
    ] as const) {
      const url = `${await app.listen({ port: 0, host: '127.0.0.1' })}/graphql`;
      const outcomes = await Promise.all(serverAudits({ url }).map(async (audit) => ({ ...audit, status: (await audit.fn()).status })));
      // MUST requirements all pass (graphql-http's own audit of the spec).
      expect(outcomes.filter((audit) => audit.name.startsWith('MUST') && audit.status !== 'ok').map((audit) => audit.name)).toEqual([]);
      results[name] = outcomes.map((audit) => `${audit.id} ${audit.status}`).sort();
    }
    expect(results.fast).toEqual(results.yoga);
  });
});
