// Who may see a field, as the two contracts declare it (`@private` in schema.graphql, `x-private: true` in openapi.yaml):
// compared with each other, and rendered as the table the server's domain enforces for both doors
// (packages/contracts/src/generated/private-fields.ts, read by apps/api/src/services/visibility.ts).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Kind, parse, type FieldDefinitionNode } from 'graphql';
import { parseYaml } from './yaml.js';
import type { GeneratedFile } from './generated-file.js';

const SDL = 'schema/schema.graphql';
const OPENAPI = 'openapi/openapi.yaml';
const TARGET = 'packages/contracts/src/generated/private-fields.ts';

/** A private field and what other callers read in its place: `""` for a `String!`, null (REST: left out) otherwise. */
export interface PrivateField {
  field: string;
  hidden: '' | null;
}

type Schema = { properties?: Record<string, Record<string, unknown>>; required?: string[] };

const isNonNullString = (field: FieldDefinitionNode) =>
  field.type.kind === Kind.NON_NULL_TYPE && field.type.type.kind === Kind.NAMED_TYPE && field.type.type.name.value === 'String';

/** Object type → its `@private` fields, from the SDL. */
export function graphqlPrivateFields(sdl: string): Map<string, PrivateField[]> {
  const types = new Map<string, PrivateField[]>();
  for (const definition of parse(sdl).definitions) {
    if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION && definition.kind !== Kind.INTERFACE_TYPE_DEFINITION) continue;
    const fields = (definition.fields ?? [])
      .filter((field) => field.directives?.some((directive) => directive.name.value === 'private'))
      .map((field): PrivateField => ({ field: field.name.value, hidden: isNonNullString(field) ? '' : null }));
    if (fields.length) types.set(definition.name.value, fields);
  }
  return types;
}

/** Schema name → its `x-private` properties, from the OpenAPI document's components. */
export function openapiPrivateFields(document: { components?: { schemas?: Record<string, Schema> } }): Map<string, string[]> {
  const schemas = new Map<string, string[]>();
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
    const fields = Object.entries(schema.properties ?? {})
      .filter(([, property]) => property['x-private'] === true)
      .map(([field]) => field);
    if (fields.length) schemas.set(name, fields);
  }
  return schemas;
}

/**
 * Where the two contracts disagree. A GraphQL type `T` is compared with the OpenAPI schemas `T` and `TItem` (a
 * collection's items: the same representation, fields optional), each field both ways: private on one door and
 * public on the other is exactly the leak this annotation exists to prevent.
 */
export function privateFieldProblems(sdl: string, document: Parameters<typeof openapiPrivateFields>[0]): string[] {
  const graphql = graphqlPrivateFields(sdl);
  const openapi = openapiPrivateFields(document);
  const schemas = document.components?.schemas ?? {};
  const problems: string[] = [];
  const typeOf = (schema: string) => schema.replace(/Item$/, '');
  for (const [schema, fields] of openapi) {
    const declared = new Set((graphql.get(typeOf(schema)) ?? []).map((entry) => entry.field));
    for (const field of fields) {
      if (!declared.has(field) && graphql.has(typeOf(schema)))
        problems.push(`${schema}.${field}: x-private in ${OPENAPI}, but ${typeOf(schema)}.${field} has no @private in ${SDL}`);
      else if (!graphql.has(typeOf(schema)))
        problems.push(`${schema}.${field}: x-private in ${OPENAPI}, but ${SDL} has no type ${typeOf(schema)} with @private fields`);
    }
  }
  for (const [type, fields] of graphql) {
    for (const schema of [type, `${type}Item`]) {
      if (!schemas[schema]) continue;
      const declared = new Set(openapi.get(schema) ?? []);
      for (const { field } of fields) {
        if (!schemas[schema].properties?.[field])
          problems.push(`${type}.${field}: @private in ${SDL}, but ${OPENAPI}'s ${schema} has no property ${field}`);
        else if (!declared.has(field))
          problems.push(`${type}.${field}: @private in ${SDL}, but ${OPENAPI}'s ${schema}.${field} has no x-private: true`);
      }
    }
  }
  return problems;
}

async function readContracts(repoRoot: string) {
  const [sdl, yaml] = await Promise.all([readFile(path.join(repoRoot, SDL), 'utf8'), readFile(path.join(repoRoot, OPENAPI), 'utf8')]);
  return { sdl, document: parseYaml(yaml) as Parameters<typeof openapiPrivateFields>[0] };
}

export async function checkPrivateFields(repoRoot: string): Promise<string[]> {
  const { sdl, document } = await readContracts(repoRoot);
  return privateFieldProblems(sdl, document);
}

/** The table the domain enforces: type → private field → the value other callers read. Refuses disagreeing contracts. */
export async function generatePrivateFields(repoRoot: string): Promise<GeneratedFile> {
  const { sdl, document } = await readContracts(repoRoot);
  const problems = privateFieldProblems(sdl, document);
  if (problems.length) throw new Error(`the contracts disagree on private fields:\n  ${problems.join('\n  ')}`);
  const table = Object.fromEntries(
    [...graphqlPrivateFields(sdl)].map(([type, fields]) => [type, Object.fromEntries(fields.map(({ field, hidden }) => [field, hidden]))]),
  );
  const content = [
    `/* Generated by \`pnpm codegen\` from the @private fields of ${SDL} and the x-private properties of ${OPENAPI}. Do not edit. */`,
    '',
    '/** Type → private field → what callers who may not see it read instead (`""` for a String!, null: absent or null). */',
    `export const PRIVATE_FIELDS = ${JSON.stringify(table, null, 2)} as const;`,
    '',
  ].join('\n');
  return { path: TARGET, content };
}
