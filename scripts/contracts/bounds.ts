// The contract bounds the server's code needs (page and batch sizes, the error envelope's lengths, enum values), read
// from openapi.yaml and rendered as constants into packages/contracts/src/generated/bounds.ts: a bound changed in the
// contract changes the code that honours it with `pnpm codegen`, and `pnpm contracts:check` fails until it is run.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { Kind, parse } from 'graphql';
import { parseYaml } from './yaml.js';
import type { GeneratedFile } from './generated-file.js';

const OPENAPI = 'openapi/openapi.yaml';
const SDL = 'schema/schema.graphql';
const TARGET = 'packages/contracts/src/generated/bounds.ts';

/** One generated number: what it bounds, and every place of openapi.yaml (JSON pointers) that must hold that number. */
interface Bound {
  name: string;
  doc: string;
  at: string[];
}

const schemas = '/components/schemas';
const parameters = '/components/parameters';

/** The bounds the code reads. Each lists every place that states it: codegen refuses a contract that disagrees with itself. */
export const BOUNDS: Bound[] = [
  {
    name: 'PAGE_SIZE_MAX',
    doc: "The most items of one page: REST's `limit`, `pageSize` and `size`; GraphQL's `limit` and `first` follow it (SPEC §2).",
    at: [`${parameters}/limit/schema/maximum`, `${parameters}/pageSize/schema/maximum`, `${parameters}/size/schema/maximum`],
  },
  {
    name: 'BULK_MAX',
    doc: 'The most items of one batch or bulk write (and ids of a bulk delete).',
    at: [`${schemas}/BatchCreateUsersInput/properties/users/maxItems`, `${schemas}/BulkUpdateUsersInput/properties/ids/maxItems`],
  },
  {
    name: 'ERROR_MESSAGE_MAX',
    doc: 'The longest `message` of an error envelope or of one of its field errors (longer ones are clipped).',
    at: [
      `${schemas}/ErrorEnvelope/properties/message/maxLength`,
      `${schemas}/ValidationErrorEnvelope/properties/message/maxLength`,
      `${schemas}/UnauthorizedError/properties/message/maxLength`,
      `${schemas}/LoginFailure/properties/message/maxLength`,
      `${schemas}/FieldError/properties/message/maxLength`,
    ],
  },
  {
    name: 'ERROR_FIELD_MAX',
    doc: 'The longest `field` of a field error.',
    at: [`${schemas}/FieldError/properties/field/maxLength`],
  },
  {
    name: 'AUTH_ERROR_MAX',
    doc: "The longest `error` string of a 401 (the envelope's and the login's).",
    at: [`${schemas}/UnauthorizedError/properties/error/maxLength`, `${schemas}/LoginFailure/properties/error/maxLength`],
  },
  {
    name: 'USER_AGENT_MAX',
    doc: 'The longest User-Agent a sign-in keeps and lists (longer ones are cut).',
    at: [`${schemas}/SignIn/properties/userAgent/maxLength`],
  },
];

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null;

/** The value at a JSON pointer of the document, through the local `$ref`s on the way. */
export function valueAt(document: unknown, pointer: string, depth = 0): unknown {
  let node: unknown = document;
  for (const token of pointer
    .split('/')
    .slice(1)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))) {
    while (isNode(node) && typeof node.$ref === 'string' && node.$ref.startsWith('#/') && !(token in node) && depth < 32) {
      node = valueAt(document, node.$ref.slice(1), depth + 1);
    }
    node = isNode(node) ? node[token] : undefined;
  }
  return node;
}

/** Each bound's value; throws naming the places when one is missing or two disagree. */
export function boundValues(document: unknown): Map<string, number> {
  const values = new Map<string, number>();
  const problems: string[] = [];
  for (const bound of BOUNDS) {
    const found = bound.at.map((pointer) => [pointer, valueAt(document, pointer)] as const);
    const missing = found.filter(([, value]) => typeof value !== 'number');
    if (missing.length) {
      problems.push(`${bound.name}: ${missing.map(([pointer]) => `#${pointer}`).join(', ')} declares no number`);
      continue;
    }
    const distinct = new Set(found.map(([, value]) => value));
    if (distinct.size > 1) {
      problems.push(
        `${bound.name}: the places that state it disagree: ${found.map(([pointer, value]) => `#${pointer} is ${String(value)}`).join(', ')}`,
      );
      continue;
    }
    values.set(bound.name, found[0]![1] as number);
  }
  if (problems.length) throw new Error(`${OPENAPI} states a bound the code reads wrongly:\n  ${problems.join('\n  ')}`);
  return values;
}

/**
 * Every string enum of the components (`Role`, `OrderStatus`), in the contract's order (the order PostgreSQL's enum
 * sorts by). An enum the SDL declares too must list the same values, in the same order.
 */
export function enumValues(document: unknown, sdl: string): Record<string, string[]> {
  const components = valueAt(document, schemas);
  const enums = Object.fromEntries(
    Object.entries(isNode(components) ? components : {})
      .filter(([, schema]) => isNode(schema) && Array.isArray(schema.enum) && schema.enum.every((value) => typeof value === 'string'))
      .map(([name, schema]) => [name, (schema as { enum: string[] }).enum]),
  );
  const problems: string[] = [];
  for (const definition of parse(sdl).definitions) {
    if (definition.kind !== Kind.ENUM_TYPE_DEFINITION) continue;
    const declared = enums[definition.name.value];
    const values = (definition.values ?? []).map((value) => value.name.value);
    if (declared && !isDeepStrictEqual(declared, values))
      problems.push(`${definition.name.value}: ${SDL} lists ${values.join(', ')}; ${OPENAPI} lists ${declared.join(', ')}`);
  }
  if (problems.length) throw new Error(`the contracts disagree on enum values:\n  ${problems.join('\n  ')}`);
  return enums;
}

export async function generateBounds(repoRoot: string): Promise<GeneratedFile> {
  const [yaml, sdl] = await Promise.all([readFile(path.join(repoRoot, OPENAPI), 'utf8'), readFile(path.join(repoRoot, SDL), 'utf8')]);
  const document = parseYaml(yaml);
  const values = boundValues(document);
  const lines = [`/* Generated by \`pnpm codegen\` from the bounds of ${OPENAPI} (scripts/contracts/bounds.ts lists them). Do not edit. */`, ''];
  for (const bound of BOUNDS) {
    lines.push(`/** ${bound.doc} ${OPENAPI}: ${bound.at.map((pointer) => `#${pointer}`).join(', ')}. */`);
    lines.push(`export const ${bound.name} = ${values.get(bound.name)};`, '');
  }
  lines.push(
    `/** Each string enum of ${OPENAPI}'s components, in its order (PostgreSQL's enum sorts in the same one). */`,
    `export const ENUM_VALUES = ${JSON.stringify(enumValues(document, sdl), null, 2)} as const;`,
    '',
  );
  return { path: TARGET, content: lines.join('\n') };
}
