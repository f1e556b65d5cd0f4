// Serves the REST contract: interactive docs at /docs, the raw document at /openapi.json and /openapi.yaml.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { loadOpenapi, openapiDocument } from '../rest/contract.js';

async function docsPlugin(app: FastifyInstance): Promise<void> {
  const { document } = loadOpenapi();
  await app.register(swagger, { mode: 'static', specification: { document: openapiDocument() as never } });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true, tryItOutEnabled: true } });
  app.get('/openapi.json', { schema: { hide: true } }, async () => document);
  app.get('/openapi.yaml', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/yaml; charset=utf-8').send(loadOpenapi().text),
  );
}

export default fp(docsPlugin, { name: 'docs' });
