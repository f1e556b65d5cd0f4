// The per-request GraphQL context: the domain services and this request's DataLoaders.
import type { Services } from '../services/index.js';
import { createLoaders, type Loaders } from './loaders.js';

export interface GraphQLContext {
  services: Services;
  loaders: Loaders;
}

export function createGraphQLContext(services: Services): GraphQLContext {
  return { services, loaders: createLoaders(services) };
}
