// The writes of the contracts, enumerated from them (not listed) for the suites that must exercise every one: the round
// trip and the rule parity (issue 39). A suite keys its table by `key` and `uncoveredAndVanished` checks it both ways.
import { buildSchema, getNamedType, isInputObjectType, type GraphQLInputObjectType } from 'graphql';
import { readFileSync } from 'node:fs';
import { loadOpenapi } from '../../src/contract/openapi-contract.js';
import { graphqlSchemaPath } from '../../src/paths.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
/** The methods whose body is stored (a GET or DELETE body means nothing to HTTP caches and proxies). */
const BODY_METHODS: readonly string[] = ['POST', 'PUT', 'PATCH'];

export interface ContractOperation {
  /** `REST <operationId>`, `GraphQL <mutation>` or `entry <name>`: a suite's table is keyed by it. */
  key: string;
  /** What a test name says: `REST PATCH /api/v1/users/{id} (updateUser)`, `GraphQL updateUser`. */
  label: string;
  /** Every property name its input reaches (through `$ref`s, arrays and nested objects; a mutation's arguments too). */
  inputs: readonly string[];
  /** Whether it changes a row that exists (REST PUT or PATCH; a mutation taking the row's `id`), not makes one. */
  changesExisting: boolean;
}

/** The users made by entries the contracts do not describe as a write: named here, exercised as the others are. */
export const USER_ENTRIES: readonly ContractOperation[] = [
  {
    key: 'entry OIDC first login',
    label: 'entry: an OpenID Connect first login (GET /auth/oauth/{provider}/callback makes the user from the claims)',
    inputs: ['name', 'email'],
    changesExisting: false,
  },
  {
    key: 'entry ADMIN bootstrap',
    label: 'entry: the ADMIN made at start from ADMIN_EMAIL and ADMIN_PASSWORD',
    inputs: ['email', 'password'],
    changesExisting: false,
  },
];

type Json = Record<string, unknown>;
const document = () => loadOpenapi().document as unknown as Json & { paths: Record<string, Record<string, Json>> };

/**
 * The prefix of the resources' paths, read from the contract's own words ("The canonical prefix is `/api/v1` and every
 * resource path below is written with it"). Outside it are the account endpoints of SPEC §3 (login, refresh, logout,
 * password change, forgot and reset, e-mail verification): their bodies are credentials and tokens, not a model's fields.
 */
export function resourcePrefix(): string {
  const description = String((document().info as { description?: string }).description ?? '');
  const prefix = /The canonical prefix is `([^`]+)`/.exec(description)?.[1];
  if (!prefix) throw new Error('openapi.yaml no longer says "The canonical prefix is `…`": say here how resources are told from the rest');
  return prefix;
}

/** The property names a JSON schema reaches, its `$ref`s followed once each. */
function propertiesReached(schema: unknown, seen = new Set<string>()): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const node = schema as Json;
  if (typeof node.$ref === 'string') {
    if (seen.has(node.$ref)) return [];
    seen.add(node.$ref);
    const target = node.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((value, segment) => (value as Json | undefined)?.[segment], document());
    return propertiesReached(target, seen);
  }
  const properties = (node.properties ?? {}) as Record<string, unknown>;
  return [
    ...Object.keys(properties),
    ...Object.values(properties).flatMap((property) => propertiesReached(property, seen)),
    ...propertiesReached(node.items, seen),
    ...(['anyOf', 'oneOf', 'allOf'] as const).flatMap((key) => ((node[key] as unknown[]) ?? []).flatMap((part) => propertiesReached(part, seen))),
  ];
}

export interface RestOperation extends ContractOperation {
  method: string;
  path: string;
  hasBody: boolean;
}

/** Every operation of openapi.yaml. */
export function restOperations(): RestOperation[] {
  const operations: RestOperation[] = [];
  for (const [path, item] of Object.entries(document().paths)) {
    for (const method of METHODS) {
      const operation = item[method] as { operationId?: string; requestBody?: { content?: Record<string, { schema?: unknown }> } } | undefined;
      if (!operation?.operationId) continue;
      const content = operation.requestBody?.content ?? {};
      operations.push({
        key: `REST ${operation.operationId}`,
        label: `REST ${method.toUpperCase()} ${path} (${operation.operationId})`,
        method: method.toUpperCase(),
        path,
        hasBody: Object.keys(content).length > 0,
        inputs: [...new Set(Object.values(content).flatMap((media) => propertiesReached(media.schema)))],
        changesExisting: method === 'put' || method === 'patch',
      });
    }
  }
  return operations;
}

/** The field names an input object type reaches. */
function inputFieldsReached(type: GraphQLInputObjectType, seen = new Set<string>()): string[] {
  if (seen.has(type.name)) return [];
  seen.add(type.name);
  return Object.values(type.getFields()).flatMap((field) => {
    const named = getNamedType(field.type);
    return [field.name, ...(isInputObjectType(named) ? inputFieldsReached(named, seen) : [])];
  });
}

/** Every mutation of schema.graphql. */
export function graphqlMutations(): ContractOperation[] {
  const mutation = buildSchema(readFileSync(graphqlSchemaPath, 'utf8')).getMutationType();
  return Object.values(mutation?.getFields() ?? {}).map((field) => ({
    key: `GraphQL ${field.name}`,
    label: `GraphQL ${field.name}`,
    inputs: [
      ...new Set(
        field.args.flatMap((argument) => {
          const named = getNamedType(argument.type);
          return isInputObjectType(named) ? inputFieldsReached(named) : [argument.name];
        }),
      ),
    ],
    changesExisting: field.args.some((argument) => argument.name === 'id'),
  }));
}

/**
 * Every write of a stored model: each REST operation under the resource prefix that takes a body (POST, PUT, PATCH),
 * each GraphQL mutation, and the entries that create users outside the contracts' writes (USER_ENTRIES).
 */
export function modelWrites(): ContractOperation[] {
  const prefix = resourcePrefix();
  const rest = restOperations().filter(
    (operation) => operation.hasBody && BODY_METHODS.includes(operation.method) && operation.path.startsWith(`${prefix}/`),
  );
  return [
    ...rest.map(({ key, label, inputs, changesExisting }) => ({ key, label, inputs, changesExisting })),
    ...graphqlMutations(),
    ...USER_ENTRIES,
  ];
}

/**
 * What a table keyed by operation misses, and what it names that is not there. `writes` are the operations the table
 * must exercise; a key may also name another operation of the contracts (a DELETE a rule applies to) when
 * `otherOperations` lists it, but never one the contracts do not have.
 */
export function uncoveredAndVanished(
  keys: Iterable<string>,
  writes: readonly ContractOperation[] = modelWrites(),
  otherOperations: readonly ContractOperation[] = [],
): { uncovered: string[]; vanished: string[] } {
  const covered = new Set(keys);
  const known = new Set([...writes, ...otherOperations].map((operation) => operation.key));
  return {
    uncovered: writes.filter((operation) => !covered.has(operation.key)).map((operation) => operation.label),
    vanished: [...covered].filter((key) => !known.has(key)),
  };
}
