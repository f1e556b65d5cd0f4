// The throughput scenarios: issue 11's table (each request to the product, its equivalent to the peers and the raw-pg
// baseline, and its target ratio), then the writes (product vs baseline, no target).
import type { Product } from '../servers.js';
import type { RequestShape } from './load.js';
import { createHash } from 'node:crypto';
import { UserDocument } from '../../packages/client/src/documents.js';

const sha256Hex = (document: string) => createHash('sha256').update(document).digest('hex');

/** The servers of the table, in its column order. */
export const SERVER_KINDS = ['product', 'postgraphile', 'apollo', 'baseline'] as const;
export type ServerKind = (typeof SERVER_KINDS)[number];
export type OtherKind = Exclude<ServerKind, 'product'>;

export const SERVER_TITLES: Record<ServerKind, string> = {
  product: 'product',
  postgraphile: 'PostGraphile 5',
  apollo: 'Apollo 5 + DataLoader',
  baseline: 'Fastify + raw pg',
};

export interface ThroughputScenario {
  /** Short name (also what bench/profile.ts and bench/compare.ts select by). */
  name: string;
  /** The product's request as the table states it. */
  title: string;
  product: RequestShape;
  /** The same read from the servers that answer it (peers only for the GraphQL reads). */
  others: Partial<Record<OtherKind, RequestShape>>;
  /** Issue 11's target: product req/s ÷ `against`'s req/s ≥ `ratio`. */
  target?: { against: OtherKind; ratio: number };
  /** Issue 11: at most this many SQL statements per product request. */
  maxStatements?: number;
  /**
   * The same operation over a smaller data set: its statement count must equal the scenario's (statements do not grow
   * with the number of rows).
   */
  constantStatementsProbe?: RequestShape;
}

const gql = (query: string, variables?: Record<string, unknown>) => ({ query, ...(variables ? { variables } : {}) });
/** Users and pages in the middle of the seeded 2,000 (bench/servers.ts seed()). */
const USER_ID = 1000;
const PAGE = 50;
const NESTED = (limit: number) => `{ users(limit: ${limit}) { id name posts { id title author { name } } } }`;
// PostGraphile's own names for the same reads (amber preset): rowId is the primary key column, `id` its global node id.
const PGL_USER = 'query($id: Int!) { userByRowId(rowId: $id) { rowId name email } }';
const PGL_NESTED =
  '{ allUsers(first: 50, orderBy: PRIMARY_KEY_ASC) { nodes { rowId name postsByAuthorId(orderBy: PRIMARY_KEY_ASC) { nodes { rowId title userByAuthorId { name } } } } } }';
const CREATE_POST = 'mutation($t: String!, $c: String!, $a: ID!) { createPost(title: $t, content: $c, authorId: $a) { id } }';

/** Reads first, writes last: the posts the writes add would otherwise grow what the reads return. */
export function throughputScenarios(product: Product): ThroughputScenario[] {
  const userQuery = gql('query($id: ID!) { user(id: $id) { id name email } }', { id: String(USER_ID) });
  const createBody = { title: 'bench', content: 'load' };
  const createVariables = gql(CREATE_POST, { t: 'bench', c: 'load', a: String(product.userId) });
  return [
    {
      name: 'GraphQL user by id',
      title: 'GraphQL `user(id) { id name email }`',
      product: { method: 'POST', path: '/graphql', body: userQuery },
      others: {
        postgraphile: { method: 'POST', path: '/graphql', body: gql(PGL_USER, { id: USER_ID }) },
        apollo: { method: 'POST', path: '/graphql', body: userQuery },
        baseline: { method: 'POST', path: '/graphql/user', body: userQuery },
      },
      target: { against: 'apollo', ratio: 1.0 },
    },
    {
      // issue 13: the client's persisted `User` document (id name email role version) sent by its hash alone
      name: 'GraphQL user by id persisted',
      title: "GraphQL the client's `User` document by `documentId` (sha256)",
      product: { method: 'POST', path: '/graphql', body: { documentId: `sha256:${sha256Hex(UserDocument)}`, variables: { id: String(USER_ID) } } },
      others: {},
    },
    {
      // the same document sent as text: what the hash saves
      name: 'GraphQL user by id as text',
      title: "GraphQL the client's `User` document sent as text",
      product: { method: 'POST', path: '/graphql', body: gql(UserDocument, { id: String(USER_ID) }) },
      others: {},
    },
    {
      name: 'GraphQL users→posts→author',
      title: 'GraphQL `users(limit: 50) { id name posts { id title author { name } } }`',
      product: { method: 'POST', path: '/graphql', body: gql(NESTED(50)) },
      others: {
        postgraphile: { method: 'POST', path: '/graphql', body: gql(PGL_NESTED) },
        apollo: { method: 'POST', path: '/graphql', body: gql(NESTED(50)) },
        baseline: { method: 'POST', path: '/graphql/nested?limit=50', body: gql(NESTED(50)) },
      },
      target: { against: 'postgraphile', ratio: 1.0 },
      maxStatements: 2,
      constantStatementsProbe: { method: 'POST', path: '/graphql', body: gql(NESTED(10)) },
    },
    {
      name: 'REST user by id',
      title: `REST \`GET /api/v1/users/${USER_ID}\``,
      product: { method: 'GET', path: `/api/v1/users/${USER_ID}` },
      others: { baseline: { method: 'GET', path: `/users/${USER_ID}` } },
      target: { against: 'baseline', ratio: 0.7 },
    },
    {
      name: 'REST users page (20)',
      title: `REST \`GET /api/v1/users?page=${PAGE}&pageSize=20\``,
      product: { method: 'GET', path: `/api/v1/users?page=${PAGE}&pageSize=20` },
      others: { baseline: { method: 'GET', path: `/users?page=${PAGE}&pageSize=20` } },
      target: { against: 'baseline', ratio: 0.6 },
    },
    {
      // issue 13: the client revalidating what it holds (the seeded user's version is 1): 304, no body
      name: 'REST user by id revalidated (304)',
      title: `REST \`GET /api/v1/users/${USER_ID}\` with \`If-None-Match: "1"\``,
      product: { method: 'GET', path: `/api/v1/users/${USER_ID}`, headers: { 'if-none-match': '"1"' } },
      others: {},
    },
    {
      name: 'REST create post',
      title: 'REST `POST /api/v1/users/{id}/posts` (Bearer)',
      product: { method: 'POST', path: `/api/v1/users/${product.userId}/posts`, token: product.token, body: createBody },
      others: { baseline: { method: 'POST', path: `/users/${product.userId}/posts`, body: createBody } },
    },
    {
      // issue 13: every write keyed (a fresh Idempotency-Key each): the claim and the stored answer are two more writes
      name: 'REST create post keyed',
      title: 'REST `POST /api/v1/users/{id}/posts` (Bearer) with a fresh `Idempotency-Key`',
      product: {
        method: 'POST',
        path: `/api/v1/users/${product.userId}/posts`,
        token: product.token,
        body: createBody,
        uniqueHeader: 'idempotency-key',
      },
      others: {},
    },
    {
      name: 'GraphQL createPost',
      title: 'GraphQL `createPost` (Bearer)',
      product: { method: 'POST', path: '/graphql', token: product.token, body: createVariables },
      others: { baseline: { method: 'POST', path: '/graphql/create-post', body: createVariables } },
    },
  ];
}
