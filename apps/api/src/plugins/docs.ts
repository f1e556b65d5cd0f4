// Serves the REST contract: interactive docs at /docs, the raw document at /openapi.json and /openapi.yaml, the changelog at /docs/changelog.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadOpenapi, openapiDocument } from '../contract/openapi-contract.js';
import { repoRoot } from '../paths.js';

/** The consumers' changelog (`pnpm contracts:changelog` writes it): where deprecated operations' `Link` points. */
export const CHANGELOG_PATH = path.join(repoRoot, 'docs/CHANGELOG-API.md');

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
  // Read when asked (a rare request): the file the last `pnpm contracts:changelog` wrote, else a line saying so.
  app.get('/docs/changelog', { schema: { hide: true } }, async (_request, reply) => {
    const text = await readFile(CHANGELOG_PATH, 'utf8').catch(() => '# API changelog\n\nNo changes recorded yet.\n');
    return reply.type('text/markdown; charset=utf-8').send(text);
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => document);
  app.get('/openapi.yaml', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/yaml; charset=utf-8').send(loadOpenapi().text),
  );
}

export default fp(docsPlugin, { name: 'docs' });
