// Serves the REST contract: interactive docs at /docs, the raw document at /openapi.json and /openapi.yaml.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadOpenapi, openapiDocument } from '../contract/openapi-contract.js';

/**
 * Swagger UI's assets as the production build copies them beside the bundle (scripts/build.mjs), or undefined when
 * running from source, where the plugin serves them from its own package folder.
 */
function bundledSwaggerUiAssets(): string | undefined {
  const copy = fileURLToPath(new URL('./static', import.meta.url));
  return existsSync(path.join(copy, 'swagger-ui-bundle.js')) ? copy : undefined;
}

async function docsPlugin(app: FastifyInstance): Promise<void> {
  const { document } = loadOpenapi();
  await app.register(swagger, { mode: 'static', specification: { document: openapiDocument() as never } });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    baseDir: bundledSwaggerUiAssets(),
    uiConfig: { deepLinking: true, tryItOutEnabled: true },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => document);
  app.get('/openapi.yaml', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/yaml; charset=utf-8').send(loadOpenapi().text),
  );
}

export default fp(docsPlugin, { name: 'docs' });
