// Where the contracts and the data live on disk, resolved from this file so the cwd does not matter.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const graphqlSchemaPath = path.join(repoRoot, 'schema/schema.graphql');
export const openapiPath = path.join(repoRoot, 'openapi/openapi.yaml');

/**
 * The data directory and the embedded database's directory for these settings (SPEC §0): DATA_DIR (default `.data`),
 * PGLITE_DIR else `<DATA_DIR>/pglite`. Relative directories are taken from the repository root, as
 * prisma/prisma.config.ts does, so the server, `pnpm db:migrate` and `pnpm db:seed` always agree on where the embedded
 * database is. An empty setting counts as unset. (config.ts reads them so; main.ts before it, to open the database early.)
 */
export function dataDirectories(settings: { DATA_DIR?: string | undefined; PGLITE_DIR?: string | undefined }): {
  dataDir: string;
  pgliteDir: string;
} {
  const dataDir = path.resolve(repoRoot, settings.DATA_DIR || '.data');
  return { dataDir, pgliteDir: settings.PGLITE_DIR ? path.resolve(repoRoot, settings.PGLITE_DIR) : path.join(dataDir, 'pglite') };
}
