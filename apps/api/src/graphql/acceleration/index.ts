// The GraphQL door's speed-ups, registered by one call in graphql/plugin.ts. Each answers exactly as the plain path
// does, and its parity test is its contract: test/graphql/fast-path.test.ts (the HTTP fast path against Yoga's
// handler, 127 kinds of request) and test/graphql/compiled-execution.test.ts (graphql-jit against graphql-js).
import type { FastifyInstance } from 'fastify';
import type { Plugin } from 'graphql-yoga';
import { declareDocumentCache, documentCache } from '../../bounds/document-cache.js';
import type { PersistedDocuments } from '../guards/persisted-documents.js';
import { databaseUnavailableAmong, withUnreachableDatabase, type AnyYoga, type GraphQLContext } from '../schema/context.js';
import { maskError } from '../transports/errors.js';
import { BYTES_PER_FIELD, compiledExecutionPlugin, MAX_KEPT_FIELDS } from './compiled-execution.js';
import { graphqlFastPath, PreparedDocuments, type FastPath } from './http-fast-path.js';

export interface GraphQLAcceleration {
  /** Envelop plugins to place before the work limit (its execute wraps the compiled one: metered and stopped alike). */
  plugins: Plugin[];
  /** The HTTP fast path over the built Yoga (GRAPHQL_FAST_PATH): true when it answered the request. */
  fastPath(yoga: AnyYoga): FastPath;
}

/** The fast path's memo, declared in the app's stores (bounded in bytes: bounds/document-cache.ts). */
function preparedDocuments(app: FastifyInstance): PreparedDocuments {
  const prepared = new PreparedDocuments(documentCache(app.config.storeBounds));
  declareDocumentCache(app.stores, 'graphql-prepared-documents', 'the texts a client sends', prepared.cache, app.config.storeBounds);
  return prepared;
}

export function graphqlAcceleration(app: FastifyInstance, options: { production: boolean; persisted: PersistedDocuments }): GraphQLAcceleration {
  const compiled = app.config.graphqlCompiledExecution;
  return {
    plugins: compiled
      ? [
          compiledExecutionPlugin({
            ...compiled,
            declareStore: (size) =>
              app.stores.declare({
                name: 'graphql-compiled-documents',
                home: 'memory',
                scope: 'store',
                maxEntries: MAX_KEPT_FIELDS,
                maxBytes: MAX_KEPT_FIELDS * BYTES_PER_FIELD,
                perClient: 'documents a client has sent repeatedly; keyed by the parsed document of the bounded parse caches',
                atBound: 'the least recently used compiled documents are evicted (run by graphql-js until compiled again)',
                config: [],
                size,
              }),
            onAnswered: app.metrics.countCompiledExecution,
            // A run that met an unreachable database is compared with graphql-js's without waiting for it again.
            referenceContext: (context, errors) => {
              const cause = databaseUnavailableAmong(errors);
              return cause === undefined ? undefined : { context: withUnreachableDatabase(context as GraphQLContext, cause), waitsOnNothing: true };
            },
          }),
        ]
      : [],
    fastPath: (yoga) =>
      app.config.graphqlFastPath
        ? graphqlFastPath(yoga, {
            maskError: (error) => maskError(error, 'Unexpected error.', !options.production),
            persisted: options.persisted,
            // Traces have a span per parse and validate: with them on, every request runs those hooks.
            prepared: app.tracerProvider ? undefined : preparedDocuments(app),
          })
        : async () => false,
  };
}
