// Extracts the trusted documents (every `/* GraphQL */` document of packages/client/src and every operation-only
// `.graphql` file of the workspace) into packages/client/persisted-documents.json, checked against the schema.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gqlPluckFromCodeStringSync } from '@graphql-tools/graphql-tag-pluck';
import { buildSchema, isExecutableDefinitionNode, parse, validate } from 'graphql';
import type { GeneratedFile } from './generated-file.js';

export const MANIFEST_PATH = 'packages/client/persisted-documents.json';
const CLIENT_SOURCES = 'packages/client/src';

/** The repository's tracked files matching a pathspec (what a clean clone holds, nothing from node_modules or dist). */
function tracked(repoRoot: string, ...pathspecs: string[]): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', ...pathspecs], { cwd: repoRoot, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .sort();
}

/** Every document with where it was found; a `.graphql` file that defines types (the schema) is not a document. */
async function collectDocuments(repoRoot: string): Promise<{ source: string; document: string }[]> {
  const found: { source: string; document: string }[] = [];
  for (const file of tracked(repoRoot, `${CLIENT_SOURCES}/*.ts`)) {
    const code = await readFile(path.join(repoRoot, file), 'utf8');
    for (const plucked of gqlPluckFromCodeStringSync(file, code, { skipIndent: true })) found.push({ source: file, document: plucked.body });
  }
  for (const file of tracked(repoRoot, '*.graphql')) {
    const text = await readFile(path.join(repoRoot, file), 'utf8');
    const definitions = parse(text).definitions;
    if (definitions.every(isExecutableDefinitionNode)) found.push({ source: file, document: text });
    else if (definitions.some(isExecutableDefinitionNode)) throw new Error(`${file} mixes operations with type definitions`);
  }
  return found;
}

/** The manifest `{ "<sha256 hex>": "<document>" }`, keys sorted; throws naming each document that does not validate. */
export async function generatePersistedDocuments(repoRoot: string): Promise<GeneratedFile> {
  const schema = buildSchema(await readFile(path.join(repoRoot, 'schema/schema.graphql'), 'utf8'));
  const manifest: Record<string, string> = {};
  const problems: string[] = [];
  for (const { source, document } of await collectDocuments(repoRoot)) {
    const errors = validate(schema, parse(document));
    if (errors.length > 0) problems.push(`${source}: ${errors.map((error) => error.message).join('; ')}`);
    manifest[createHash('sha256').update(document).digest('hex')] = document;
  }
  if (problems.length > 0) throw new Error(`documents that do not validate against schema/schema.graphql:\n${problems.join('\n')}`);
  const sorted = Object.fromEntries(Object.entries(manifest).sort(([a], [b]) => a.localeCompare(b)));
  return { path: MANIFEST_PATH, content: `${JSON.stringify(sorted, null, 2)}\n` };
}
