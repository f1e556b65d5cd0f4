// `pnpm codegen`: regenerates every contract-derived file (scripts/contracts/generate.ts lists them) from schema.graphql and openapi.yaml.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generateContracts, repoRoot } from './contracts/generate.js';

for (const file of await generateContracts()) {
  const target = path.join(repoRoot, file.path);
  await mkdir(path.dirname(target), { recursive: true });
  await writeFile(target, file.content);
  console.log(`wrote ${file.path}`);
}
