// `pnpm documents:manifest`: writes packages/client/persisted-documents.json, the trusted documents (also written by
// `pnpm codegen`, and checked for staleness by `pnpm contracts:check`).
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from './contracts/generate.js';
import { generatePersistedDocuments } from './contracts/persisted-documents.js';

const manifest = await generatePersistedDocuments(repoRoot);
await writeFile(path.join(repoRoot, manifest.path), manifest.content);
console.log(`wrote ${manifest.path} (${Object.keys(JSON.parse(manifest.content) as object).length} documents)`);
