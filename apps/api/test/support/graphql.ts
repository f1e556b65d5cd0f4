// Sends a GraphQL document to the real /graphql route and returns status and parsed body.
import type { FastifyInstance } from 'fastify';

export interface GraphQLResponse<Data = Record<string, unknown>> {
  status: number;
  data?: Data | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
}

export async function graphql<Data = Record<string, unknown>>(
  app: FastifyInstance,
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<GraphQLResponse<Data>> {
  const response = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    payload: { query, variables },
  });
  return { status: response.statusCode, ...(response.json() as Omit<GraphQLResponse<Data>, 'status'>) };
}
