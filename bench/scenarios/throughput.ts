// The throughput scenarios: each one request to the product and its equivalent to the raw-pg baseline, with its target.
import type { Product } from '../servers.js';
import type { RequestShape } from './load.js';

export interface ThroughputScenario {
  name: string;
  product: RequestShape;
  baseline: RequestShape;
  /** Minimum product/baseline req/s ratio (issue 6), when the scenario has one. */
  target?: number;
  /**
   * The same operation over a smaller data set: its statement count must equal the scenario's (statements do not grow
   * with the number of rows).
   */
  constantStatementsProbe?: RequestShape;
}

const gql = (query: string, variables?: Record<string, unknown>) => ({ query, ...(variables ? { variables } : {}) });
const NESTED = (args: string) => `{ users${args} { id posts { id title author { name } } } }`;
const CREATE_POST = 'mutation($t: String!, $c: String!, $a: ID!) { createPost(title: $t, content: $c, authorId: $a) { id } }';

/** Reads first, writes last: the posts the writes add would otherwise grow what the reads return. */
export function throughputScenarios(product: Product): ThroughputScenario[] {
  const userQuery = gql('query($id: ID!) { user(id: $id) { id name email } }', { id: '2' });
  const createBody = { title: 'bench', content: 'load' };
  const createVariables = gql(CREATE_POST, { t: 'bench', c: 'load', a: String(product.userId) });
  return [
    {
      name: 'REST user by id',
      product: { method: 'GET', path: '/api/v1/users/2' },
      baseline: { method: 'GET', path: '/users/2' },
      target: 0.6,
    },
    {
      name: 'REST users page (20)',
      product: { method: 'GET', path: '/api/v1/users?page=2&pageSize=20' },
      baseline: { method: 'GET', path: '/users?page=2&pageSize=20' },
    },
    {
      name: 'GraphQL user by id',
      product: { method: 'POST', path: '/graphql', body: userQuery },
      baseline: { method: 'POST', path: '/graphql/user', body: userQuery },
      target: 0.4,
    },
    {
      name: 'GraphQL users→posts→author',
      product: { method: 'POST', path: '/graphql', body: gql(NESTED('')) },
      baseline: { method: 'POST', path: '/graphql/nested', body: gql(NESTED('')) },
      target: 0.3,
      constantStatementsProbe: { method: 'POST', path: '/graphql', body: gql(NESTED('(limit: 10)')) },
    },
    {
      name: 'REST create post',
      product: { method: 'POST', path: `/api/v1/users/${product.userId}/posts`, token: product.token, body: createBody },
      baseline: { method: 'POST', path: `/users/${product.userId}/posts`, body: createBody },
    },
    {
      name: 'GraphQL createPost',
      product: { method: 'POST', path: '/graphql', token: product.token, body: createVariables },
      baseline: { method: 'POST', path: '/graphql/create-post', body: createVariables },
    },
  ];
}
