// Loads openapi/openapi.yaml, the REST contract, once per process (the production build: the copy built beside it).
import { existsSync, readFileSync } from 'node:fs';
// js-yaml, the repository's one YAML parser (scripts/contracts/yaml.ts), with the same core schema: parses this
// 3 000-line contract 3× faster than `yaml` (≈50 vs 155 ms of a start from source).
import { CORE_SCHEMA, load } from 'js-yaml';
import { openapiPath } from '../paths.js';

/** YAML as the repository reads it everywhere (the contract gates too: scripts/contracts/yaml.ts): YAML 1.2's core schema. */
export const parseYaml = (text: string): unknown => load(text, { schema: CORE_SCHEMA });

export interface OpenapiDocument {
  openapi: string;
  paths: Record<string, Record<string, { operationId?: string } & Record<string, unknown>>>;
  [key: string]: unknown;
}

/**
 * The production build's copy of the contract, beside the bundle (scripts/build.mjs): as written and already parsed,
 * so a start reads JSON (~2 ms) instead of parsing the YAML (~50 ms). Absent when running from source.
 */
const BUILT = { text: new URL('./openapi.yaml', import.meta.url), document: new URL('./openapi.json', import.meta.url) };

interface Contract {
  /** The contract as written (YAML). */
  readonly text: string;
  document: OpenapiDocument;
  /** A new deep copy of `document`. */
  copy(): OpenapiDocument;
}

let cached: Contract | undefined;

function read(): Contract {
  // Both or neither: a build with one of them missing fails the start, not a later request for /openapi.yaml.
  if (existsSync(BUILT.document) || existsSync(BUILT.text)) {
    if (!existsSync(BUILT.document) || !existsSync(BUILT.text))
      throw new Error(
        `the build's contract is incomplete: ${BUILT.document.pathname} and ${BUILT.text.pathname} must both be there (run pnpm build)`,
      );
    const json = readFileSync(BUILT.document, 'utf8');
    let text: string | undefined;
    return {
      // The text only when /openapi.yaml is asked for.
      get text() {
        return (text ??= readFileSync(BUILT.text, 'utf8'));
      },
      document: JSON.parse(json) as OpenapiDocument,
      // Parsing the JSON again is cheaper than structuredClone (no object graph to walk).
      copy: () => JSON.parse(json) as OpenapiDocument,
    };
  }
  const text = readFileSync(openapiPath, 'utf8');
  const document = parseYaml(text) as OpenapiDocument;
  return { text, document, copy: () => structuredClone(document) };
}

export function loadOpenapi(): Contract {
  return (cached ??= read());
}

/** Returns a fresh deep copy (the glue plugin and docs mutate what they are given). */
export function openapiDocument(): OpenapiDocument {
  return loadOpenapi().copy();
}
