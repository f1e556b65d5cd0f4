// The contracts against the Prisma model: every field a contract declares on a model's representation is stored (a
// Prisma field of its name) or resolved (a GraphQL resolver, a REST field the server lists as computed), and every field
// of an input that writes a model is stored under its name or listed as stored by hand. A field that is neither is
// accepted and answered by the contract, and silently dropped or never filled by the server (issue 29's `bio`).
//
// prisma/schema.prisma is read with Prisma's own parser: `getDMMF` of @prisma/get-dmmf (the WebAssembly
// prisma-schema build, the function @prisma/internals re-exports, published alone with five small dependencies and no
// engine download), so the model is exactly what `prisma generate` sees, relations and @map resolved. Rejected:
// @prisma/internals (not installed with prisma 7, whose CLI bundles it; pulls @prisma/engines and a second schema
// engine), @mrleebo/prisma-ast (a syntax tree only, and requires Node 22 where this project supports 20.19).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { getDMMF } from '@prisma/get-dmmf';
import { columnOf } from '../../packages/db/src/columns.js';
import { buildSchema, isInputObjectType, isObjectType } from 'graphql';
import { parseYaml } from './yaml.js';

export const SDL = 'schema/schema.graphql';
export const OPENAPI = 'openapi/openapi.yaml';
export const PRISMA = 'prisma/schema.prisma';
export const STORAGE_MAPPING = 'apps/api/src/services/storage-mapping.ts';
export const RESOLVERS = 'apps/api/src/graphql/schema/resolvers';

/**
 * Model name → its fields: every field answers a representation; only columns (scalars, enums) store an input.
 * `offConvention`: the columns not named snake_case(field), which the server's SQL reads would miss. `table` and
 * `columnNames` (field → column): where the database keeps them (@@map, @map).
 */
export type PrismaModels = Map<
  string,
  { fields: Set<string>; columns: Set<string>; offConvention: string[]; table: string; columnNames: Map<string, string> }
>;

/** What the server adds to the model (apps/api/src/services/storage-mapping.ts, and the GraphQL resolver map). */
export interface ServerTables {
  /** Model → input fields the domain stores by hand, under another name (`password` → `passwordHash`). */
  storedByHand: Readonly<Record<string, readonly string[]>>;
  /** Model → REST representation fields with no column of their name (`emailVerified` from `emailVerifiedAt`). */
  computedFields: Readonly<Record<string, readonly string[]>>;
  /** GraphQL type → field → resolver (`resolvers` of apps/api/src/graphql/schema/resolvers/index.ts). */
  resolvers: Readonly<Record<string, object | undefined>>;
}

/** The models of a Prisma schema, as Prisma itself parses it; throws naming the file when it does not parse. */
export async function prismaModels(schema: string): Promise<PrismaModels> {
  const result = await getDMMF({ datamodel: schema });
  if ('reason' in result) throw new Error(`${PRISMA} does not parse: ${result.reason} ${result.error.message}`);
  return new Map(
    result.datamodel.models.map((model) => [
      model.name,
      {
        fields: new Set(model.fields.map((field) => field.name)),
        columns: new Set(model.fields.filter((field) => field.kind !== 'object').map((field) => field.name)),
        offConvention: model.fields
          .filter((field) => field.kind !== 'object' && (field.dbName ?? field.name) !== columnOf(field.name))
          .map((field) => `${field.name} (column ${field.dbName ?? field.name})`),
        table: model.dbName ?? model.name,
        columnNames: new Map(model.fields.filter((field) => field.kind !== 'object').map((field) => [field.name, field.dbName ?? field.name])),
      },
    ]),
  );
}

/**
 * The model an input type writes, by its name: `<Model>Input` or `<Verb><Model>Input` with a one-word verb
 * (CreateUserInput, ReplaceUserInput, UpdateOrderInput, CreateApiKeyInput → User, User, Order, ApiKey). Wrappers such as
 * BatchCreateUsersInput or LoginInput name no model and are not compared; their items are inputs of their own.
 */
export function modelOfInput(name: string, models: PrismaModels): string | undefined {
  const match = /^([A-Z][a-z0-9]*)?([A-Z]\w*)Input$/.exec(name);
  if (!match) return undefined;
  const [, verb = '', rest = ''] = match;
  if (models.has(`${verb}${rest}`)) return `${verb}${rest}`;
  return models.has(rest) ? rest : undefined;
}

/** The model a representation schema describes: `<Model>` or a collection's `<Model>Item`. */
function modelOfRepresentation(name: string, models: PrismaModels): string | undefined {
  if (models.has(name)) return name;
  const item = /^(\w+)Item$/.exec(name)?.[1];
  return item && models.has(item) ? item : undefined;
}

const listed = (table: Readonly<Record<string, readonly string[]>>, model: string, field: string) => table[model]?.includes(field) ?? false;

/** Why an input field is not stored by its name: no such field, or a relation (written through its foreign key). */
function noColumn(models: PrismaModels, model: string, field: string): string {
  const relation = models.get(model)?.fields.has(field);
  return `${PRISMA}'s model ${model} has no ${relation ? 'column (only a relation) named' : 'field'} ${field}`;
}

/**
 * GraphQL: an object type named after a model has each field in the model or resolved by the server; an input type
 * that writes a model has each field a column of it or stored by hand.
 */
export function graphqlStorageProblems(sdl: string, models: PrismaModels, server: ServerTables): string[] {
  const problems: string[] = [];
  for (const type of Object.values(buildSchema(sdl).getTypeMap())) {
    const represented = models.get(type.name);
    if (isObjectType(type) && represented) {
      const resolved = server.resolvers[type.name] ?? {};
      for (const field of Object.keys(type.getFields())) {
        if (represented.fields.has(field) || field in resolved) continue;
        problems.push(
          `${type.name}.${field}: ${SDL} declares it, but ${PRISMA}'s model ${type.name} has no field ${field} and the server has no ` +
            `${type.name}.${field} resolver (${RESOLVERS})`,
        );
      }
    }
    const written = modelOfInput(type.name, models);
    if (!isInputObjectType(type) || !written) continue;
    for (const field of Object.keys(type.getFields())) {
      if (models.get(written)!.columns.has(field) || listed(server.storedByHand, written, field)) continue;
      problems.push(
        `${type.name}.${field}: ${SDL} declares it, but ${noColumn(models, written, field)} and ${STORAGE_MAPPING}'s ` +
          `STORED_BY_HAND.${written} does not list ${field}`,
      );
    }
  }
  return problems;
}

type Schema = { $ref?: string; properties?: Record<string, unknown>; allOf?: Schema[] };
type OpenapiDocument = { components?: { schemas?: Record<string, Schema> } };

/** A schema's property names, its `allOf` members' and those of the local `$ref`s it goes through. */
function propertyNames(schema: Schema | undefined, document: OpenapiDocument, seen = new Set<Schema>()): string[] {
  if (!schema || seen.has(schema)) return [];
  seen.add(schema);
  const target = schema.$ref?.startsWith('#/components/schemas/') ? document.components?.schemas?.[schema.$ref.slice(21)] : undefined;
  return [
    ...new Set([
      ...Object.keys(schema.properties ?? {}),
      ...propertyNames(target, document, seen),
      ...(schema.allOf ?? []).flatMap((member) => propertyNames(member, document, seen)),
    ]),
  ];
}

/**
 * OpenAPI: a component schema named after a model (or `<Model>Item`) has each property in the model or listed as
 * computed by the server; a component schema that writes a model (named as modelOfInput reads it: the request bodies
 * of openapi.yaml are these, by `$ref`) has each property a column of it or stored by hand.
 */
export function openapiStorageProblems(document: OpenapiDocument, models: PrismaModels, server: ServerTables): string[] {
  const problems: string[] = [];
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
    const represented = modelOfRepresentation(name, models);
    if (represented) {
      for (const field of propertyNames(schema, document)) {
        if (models.get(represented)!.fields.has(field) || listed(server.computedFields, represented, field)) continue;
        problems.push(
          `${name}.${field}: ${OPENAPI} declares it, but ${PRISMA}'s model ${represented} has no field ${field} and ${STORAGE_MAPPING}'s ` +
            `COMPUTED_FIELDS.${represented} does not list ${field}`,
        );
      }
    }
    const written = represented ? undefined : modelOfInput(name, models);
    if (!written) continue;
    for (const field of propertyNames(schema, document)) {
      if (models.get(written)!.columns.has(field) || listed(server.storedByHand, written, field)) continue;
      problems.push(
        `${name}.${field}: ${OPENAPI} declares it, but ${noColumn(models, written, field)} and ${STORAGE_MAPPING}'s ` +
          `STORED_BY_HAND.${written} does not list ${field}`,
      );
    }
  }
  return problems;
}

/** Both contracts of the repository against its Prisma schema, with the server's tables. */
export async function checkStorage(repoRoot: string, server: ServerTables): Promise<string[]> {
  const read = (file: string) => readFile(path.join(repoRoot, file), 'utf8');
  const [sdl, yaml, prisma] = await Promise.all([read(SDL), read(OPENAPI), read(PRISMA)]);
  const models = await prismaModels(prisma);
  const conventions = [...models].flatMap(([model, { offConvention }]) =>
    offConvention.map(
      (field) =>
        `${model}.${field}: ${PRISMA} must name each column snake_case(field) (@map("${columnOf(field.split(' ')[0]!)}")): the server's SQL reads find columns by that rule`,
    ),
  );
  return [
    ...conventions,
    ...graphqlStorageProblems(sdl, models, server),
    ...openapiStorageProblems(parseYaml(yaml) as OpenapiDocument, models, server),
  ];
}
