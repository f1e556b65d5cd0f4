// Where the contracts live on disk, resolved from this file so the cwd does not matter.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const graphqlSchemaPath = path.join(repoRoot, 'schema/schema.graphql');
export const openapiPath = path.join(repoRoot, 'openapi/openapi.yaml');
