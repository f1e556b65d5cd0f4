// The per-request GraphQL context: the domain services and this request's DataLoaders.
import type { FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.js';
import type { Services } from '../services/index.js';
import { createLoaders, type Loaders } from './loaders.js';

export interface GraphQLContext {
  /** The caller, resolved once by the auth plugin (the same principal REST handlers see). */
  principal: Principal;
  services: Services;
  loaders: Loaders;
  /** The HTTP request (POST/GET/SSE; shared by every operation of a batch); absent on WebSocket operations. */
  request?: FastifyRequest | undefined;
}

export function createGraphQLContext(services: Services, principal: Principal, request?: FastifyRequest): GraphQLContext {
  return { principal, services, loaders: createLoaders(services), request };
}
