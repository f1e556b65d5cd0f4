// The consumers' changelog (SPEC §6): what was added, deprecated (with its sunset), changed and removed in both
// contracts between a base revision and the working tree, as Markdown (`pnpm contracts:changelog`).
import { ChangeType, diff as diffGraphql, CriticalityLevel } from '@graphql-inspector/core';
import { buildSchema, isEnumType, isInputObjectType, isInterfaceType, isObjectType, type GraphQLSchema } from 'graphql';
import { graphqlBreakingChanges, openapiBreakingChanges } from './breaking.js';
import { parseYaml } from './yaml.js';

interface Sections {
  added: string[];
  deprecated: string[];
  changed: string[];
  removed: string[];
}

const empty = (): Sections => ({ added: [], deprecated: [], changed: [], removed: [] });
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const REASON_SUNSET = /\bSunset: (\d{4}-\d{2}-\d{2})\b/;
const firstLine = (text: unknown) => (typeof text === 'string' ? text.trim().split('\n')[0] : undefined);

type Doc = { paths?: Record<string, Record<string, unknown>>; components?: { schemas?: Record<string, unknown> } };
type Parameter = { name: string; in: string; deprecated?: boolean; 'x-sunset'?: string; description?: string };

/** Each operation of a document by `METHOD /path`. */
function operations(doc: Doc): Map<string, Record<string, unknown>> {
  const found = new Map<string, Record<string, unknown>>();
  for (const [route, item] of Object.entries(doc.paths ?? {}))
    for (const method of METHODS) if (isObject(item[method])) found.set(`${method.toUpperCase()} ${route}`, item[method]);
  return found;
}

const parametersOf = (operation: Record<string, unknown>): Map<string, Parameter> =>
  new Map(
    ((operation.parameters as Parameter[] | undefined) ?? [])
      .filter((p) => typeof p?.name === 'string')
      .map((p) => [`${p.in} parameter \`${p.name}\``, p]),
  );

const propertiesOf = (schema: unknown): Record<string, Record<string, unknown>> =>
  isObject(schema) && isObject(schema.properties) ? (schema.properties as Record<string, Record<string, unknown>>) : {};

const sunsetOf = (node: { deprecated?: unknown; 'x-sunset'?: unknown }) => (typeof node['x-sunset'] === 'string' ? node['x-sunset'] : 'no date');

function openapiSections(baseText: string, headText: string, breaking: { message: string; removal?: boolean }[]): Sections {
  const [base, head] = [parseYaml(baseText) as Doc, parseYaml(headText) as Doc];
  const out = empty();
  const [before, after] = [operations(base), operations(head)];
  const deprecation = (what: string, node: Record<string, unknown>, was: Record<string, unknown> | undefined) => {
    if (node.deprecated === true && (was?.deprecated !== true || was['x-sunset'] !== node['x-sunset']))
      out.deprecated.push(
        `${what}: deprecated, removed on or after **${sunsetOf(node)}**.${node.description ? ` ${firstLine(node.description)}` : ''}`,
      );
  };
  for (const [name, operation] of after) {
    const was = before.get(name);
    const label = `\`${name}\`${typeof operation.operationId === 'string' ? ` (${operation.operationId})` : ''}`;
    if (!was) {
      out.added.push(`${label}${operation.summary ? `: ${firstLine(operation.summary)}` : ''}`);
      continue;
    }
    deprecation(label, operation, was);
    const [oldParameters, newParameters] = [parametersOf(was), parametersOf(operation)];
    for (const [key, parameter] of newParameters) {
      if (!oldParameters.has(key)) out.added.push(`${label}: ${key}${parameter.description ? `: ${firstLine(parameter.description)}` : ''}`);
      else deprecation(`${label}: ${key}`, parameter as never, oldParameters.get(key) as never);
    }
    for (const key of oldParameters.keys()) if (!newParameters.has(key)) out.removed.push(`${label}: ${key}`);
  }
  for (const name of before.keys()) if (!after.has(name)) out.removed.push(`\`${name}\``);
  const [oldSchemas, newSchemas] = [base.components?.schemas ?? {}, head.components?.schemas ?? {}];
  for (const [name, schema] of Object.entries(newSchemas)) {
    if (!(name in oldSchemas)) {
      out.added.push(`schema \`${name}\``);
      continue;
    }
    const [oldProperties, newProperties] = [propertiesOf(oldSchemas[name]), propertiesOf(schema)];
    for (const [property, node] of Object.entries(newProperties)) {
      if (!(property in oldProperties))
        out.added.push(`property \`${name}.${property}\`${node.description ? `: ${firstLine(node.description)}` : ''}`);
      else deprecation(`property \`${name}.${property}\``, node, oldProperties[property]);
    }
    for (const property of Object.keys(oldProperties)) if (!(property in newProperties)) out.removed.push(`property \`${name}.${property}\``);
  }
  for (const name of Object.keys(oldSchemas)) if (!(name in newSchemas)) out.removed.push(`schema \`${name}\``);
  out.changed.push(
    ...[...new Set(breaking.filter((change) => !change.removal).map((change) => change.message))].map((message) => `**breaking**: ${message}`),
  );
  return out;
}

/** Every deprecation of a schema, by coordinate, with its reason. */
function graphqlDeprecations(schema: GraphQLSchema): Map<string, string> {
  const found = new Map<string, string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (field.deprecationReason) found.set(`${type.name}.${field.name}`, field.deprecationReason);
        for (const arg of field.args) if (arg.deprecationReason) found.set(`${type.name}.${field.name}(${arg.name}:)`, arg.deprecationReason);
      }
    }
    if (isInputObjectType(type))
      for (const field of Object.values(type.getFields()))
        if (field.deprecationReason) found.set(`${type.name}.${field.name}`, field.deprecationReason);
    if (isEnumType(type))
      for (const value of type.getValues()) if (value.deprecationReason) found.set(`${type.name}.${value.name}`, value.deprecationReason);
  }
  return found;
}

const GRAPHQL_ADDED = new Set<string>([
  ChangeType.FieldAdded,
  ChangeType.TypeAdded,
  ChangeType.EnumValueAdded,
  ChangeType.FieldArgumentAdded,
  ChangeType.InputFieldAdded,
  ChangeType.UnionMemberAdded,
  ChangeType.ObjectTypeInterfaceAdded,
]);
const GRAPHQL_REMOVED = new Set<string>([
  ChangeType.FieldRemoved,
  ChangeType.TypeRemoved,
  ChangeType.EnumValueRemoved,
  ChangeType.FieldArgumentRemoved,
  ChangeType.InputFieldRemoved,
  ChangeType.UnionMemberRemoved,
  ChangeType.ObjectTypeInterfaceRemoved,
]);
/** Not for consumers' eyes: descriptions and directives say nothing a client calls differently. */
const GRAPHQL_QUIET = /DESCRIPTION|DEPRECATION|DIRECTIVE/;

async function graphqlSections(baseSdl: string, headSdl: string): Promise<Sections> {
  const [base, head] = [buildSchema(baseSdl), buildSchema(headSdl)];
  const out = empty();
  const breaking = new Set((await graphqlBreakingChanges(baseSdl, headSdl)).map((change) => change.message));
  for (const change of await diffGraphql(base, head)) {
    if (GRAPHQL_ADDED.has(change.type)) out.added.push(change.message);
    else if (GRAPHQL_REMOVED.has(change.type)) out.removed.push(change.message);
    else if (!GRAPHQL_QUIET.test(change.type) || breaking.has(change.message)) {
      const level = breaking.has(change.message) || change.criticality.level === CriticalityLevel.Breaking ? '**breaking**: ' : '';
      out.changed.push(`${level}${change.message}`);
    }
  }
  // Access and privacy changes graphql-inspector reports as directive usage (access.ts words them).
  for (const message of breaking)
    if (!out.changed.some((line) => line.endsWith(message)) && !out.removed.includes(message)) out.changed.push(`**breaking**: ${message}`);
  const [was, now] = [graphqlDeprecations(base), graphqlDeprecations(head)];
  for (const [coordinate, reason] of now) {
    if (was.get(coordinate) === reason) continue;
    const sunset = REASON_SUNSET.exec(reason)?.[1] ?? 'no date';
    const why = reason.replace(/\s*\bSunset: \d{4}-\d{2}-\d{2}\.?/, '').trim();
    out.deprecated.push(`\`${coordinate}\`: deprecated, removed on or after **${sunset}**.${why ? ` ${why}${/[.!?]$/.test(why) ? '' : '.'}` : ''}`);
  }
  return out;
}

function render(title: string, sections: Sections): string[] {
  const lines = [`## ${title}`, ''];
  const parts: [keyof Sections, string][] = [
    ['added', 'Added'],
    ['deprecated', 'Deprecated (with the date after which it may be removed)'],
    ['changed', 'Changed'],
    ['removed', 'Removed'],
  ];
  if (parts.every(([key]) => sections[key].length === 0)) return [...lines, 'No change.', ''];
  for (const [key, heading] of parts) {
    if (sections[key].length === 0) continue;
    lines.push(`### ${heading}`, '', ...sections[key].map((line) => `- ${line}`), '');
  }
  return lines;
}

/** The changelog between the contracts at a base revision and the working tree's, as Markdown. */
export async function changelog(
  base: { openapi?: string; graphql?: string },
  head: { openapi?: string; graphql?: string },
  label: string,
): Promise<string> {
  const lines = [
    '# API changelog',
    '',
    `What changed for clients of both doors since ${label}. Written by \`pnpm contracts:changelog\` from the contracts`,
    '(`openapi/openapi.yaml`, `schema/schema.graphql`); a deprecated REST operation links here from its `Link` header.',
    'Something deprecated keeps working until its sunset date at least; after it, it is removed once no client used it',
    'for 30 days (docs/contracts-check.md).',
    '',
  ];
  if (base.openapi !== undefined && head.openapi !== undefined) {
    const breaking = await openapiBreakingChanges(base.openapi, head.openapi);
    lines.push(...render('REST (`/api/v1`, openapi/openapi.yaml)', openapiSections(base.openapi, head.openapi, breaking)));
  }
  if (base.graphql !== undefined && head.graphql !== undefined)
    lines.push(...render('GraphQL (`/graphql`, schema/schema.graphql)', await graphqlSections(base.graphql, head.graphql)));
  return `${lines.join('\n').trimEnd()}\n`;
}
