// Drift between the contracts and the running server: served GraphQL schema, REST operations and routes.
import { buildClientSchema, buildSchema, getIntrospectionQuery, lexicographicSortSchema, printSchema, type IntrospectionQuery } from 'graphql';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseYaml } from './yaml.js';
import type { FastifyInstance } from 'fastify';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'];
/** Path prefixes whose routes must all be declared in openapi.yaml. */
const CONTRACT_PREFIXES = ['/api', '/login', '/logout', '/auth', '/healthz', '/readyz'];

const canonical = (sdl: string) => printSchema(lexicographicSortSchema(buildSchema(sdl)));

/** Differences between the schema the server answers introspection with and schema.graphql. */
export async function graphqlDrift(app: FastifyInstance, repoRoot: string): Promise<string[]> {
  const response = await app.inject({
    method: 'POST',
    url: '/graphql',
    payload: { query: getIntrospectionQuery({ descriptions: true, schemaDescription: true }) },
  });
  const result = response.json() as { data?: IntrospectionQuery; errors?: unknown };
  if (!result.data) return [`introspection failed: ${JSON.stringify(result.errors)}`];
  const served = printSchema(lexicographicSortSchema(buildClientSchema(result.data)));
  const contract = canonical(await readFile(path.join(repoRoot, 'schema/schema.graphql'), 'utf8'));
  if (served === contract) return [];
  const servedLines = new Set(served.split('\n'));
  const contractLines = new Set(contract.split('\n'));
  return [
    ...[...contractLines].filter((line) => !servedLines.has(line)).map((line) => `not served: ${line.trim()}`),
    ...[...servedLines].filter((line) => !contractLines.has(line)).map((line) => `served but not in schema.graphql: ${line.trim()}`),
  ];
}

interface Operation {
  operationId: string;
  method: string;
  path: string;
}

export async function openapiOperations(repoRoot: string): Promise<Operation[]> {
  const document = parseYaml(await readFile(path.join(repoRoot, 'openapi/openapi.yaml'), 'utf8')) as {
    paths: Record<string, Record<string, { operationId?: string }>>;
  };
  return Object.entries(document.paths).flatMap(([route, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, operation]) => ({ operationId: operation.operationId ?? '', method: method.toUpperCase(), path: route })),
  );
}

const toFastifyPath = (openapiPath: string) => openapiPath.replace(/\{([^}]+)\}/g, ':$1');

/** Operations without a handler, handlers without an operation, and served routes the contract lacks. */
export async function restDrift(app: FastifyInstance, repoRoot: string, implemented: ReadonlySet<string>): Promise<string[]> {
  const operations = await openapiOperations(repoRoot);
  const problems: string[] = [];
  for (const op of operations) {
    if (!op.operationId) problems.push(`${op.method} ${op.path} has no operationId`);
    else if (!implemented.has(op.operationId)) {
      problems.push(`${op.operationId} (${op.method} ${op.path}) has no handler in apps/api/src/rest/operations.ts`);
    }
    const served = app.routeTable.some((route) => route.method === op.method && route.url === toFastifyPath(op.path));
    if (!served) problems.push(`${op.operationId} (${op.method} ${op.path}) is not registered in the app`);
  }
  const declared = new Set(operations.map((op) => `${op.method} ${toFastifyPath(op.path)}`));
  for (const route of app.routeTable) {
    const underContract = CONTRACT_PREFIXES.some((prefix) => route.url === prefix || route.url.startsWith(`${prefix}/`));
    if (underContract && route.method !== 'HEAD' && !declared.has(`${route.method} ${route.url}`)) {
      problems.push(`route ${route.method} ${route.url} is served but not declared in openapi.yaml`);
    }
  }
  for (const id of implemented) {
    if (!operations.some((op) => op.operationId === id)) problems.push(`handler "${id}" matches no operation`);
  }
  return problems;
}
