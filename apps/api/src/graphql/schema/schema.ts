// The executable schema: schema.graphql (the contract, read as is) joined with the typed resolvers.
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { GraphQLSchema } from 'graphql';
import { readFileSync } from 'node:fs';
import { graphqlSchemaPath } from '../../paths.js';
import { meterResolvers } from '../guards/budget.js';
import { authDirectiveTransformer } from './directives/auth.js';
import { privateDirectiveTransformer } from './directives/private.js';
import { resolvers } from './resolvers/index.js';

export function buildGraphQLSchema(): GraphQLSchema {
  const typeDefs = readFileSync(graphqlSchemaPath, 'utf8');
  // The meter wraps the @auth check too: a refused field is not charged, but is checked against the deadline.
  return meterResolvers(privateDirectiveTransformer(authDirectiveTransformer(makeExecutableSchema({ typeDefs, resolvers }))));
}
