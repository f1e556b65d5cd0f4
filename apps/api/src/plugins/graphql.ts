// Mounts GraphQL Yoga on Fastify at /graphql (POST, GET and GraphiQL for browsers).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { createYoga } from 'graphql-yoga';
import { createGraphQLContext } from '../graphql/context.js';
import { maskError } from '../graphql/errors.js';
import { buildGraphQLSchema } from '../graphql/schema.js';

interface ServerContext {
  req: FastifyRequest;
  reply: FastifyReply;
}

async function graphqlPlugin(app: FastifyInstance): Promise<void> {
  const production = app.config.nodeEnv === 'production';
  const yoga = createYoga<ServerContext>({
    schema: buildGraphQLSchema(),
    graphqlEndpoint: '/graphql',
    context: ({ req }) => createGraphQLContext(app.services, req.principal),
    maskedErrors: { maskError, isDev: !production },
    graphiql: { title: 'users-posts GraphQL' },
    landingPage: false,
    logging: {
      debug: (...args) => app.log.debug(args.length === 1 ? args[0] : args),
      info: (...args) => app.log.info(args.length === 1 ? args[0] : args),
      warn: (...args) => app.log.warn(args.length === 1 ? args[0] : args),
      error: (...args) => app.log.error(args.length === 1 ? args[0] : args),
    },
  });

  app.route({
    url: yoga.graphqlEndpoint,
    method: ['GET', 'POST', 'OPTIONS'],
    handler: async (req, reply) => {
      const response = await yoga.handleNodeRequestAndResponse(req, reply, { req, reply });
      response.headers.forEach((value, key) => void reply.header(key, value));
      reply.status(response.status);
      return reply.send(response.body);
    },
  });
}

export default fp(graphqlPlugin, { name: 'graphql', dependencies: ['database', 'auth'] });
