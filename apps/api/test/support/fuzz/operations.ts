// The REST operations of openapi.yaml as the fuzzer needs them: method, path template, parameters and request body schema.
import fc from 'fast-check';
import { loadOpenapi } from '../../../src/contract/openapi-contract.js';
import type { Resolve, Schema } from './json-schema.js';

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: Schema;
}

export interface FuzzOperation {
  operationId: string;
  method: string;
  /** As in the contract, e.g. `/api/v1/users/{id}/posts`. */
  path: string;
  pathParameters: Parameter[];
  queryParameters: Parameter[];
  /** The JSON request body schema, when the operation takes one. */
  body: Schema | undefined;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const document = structuredClone(loadOpenapi().document) as Schema;

/** Resolves a local `$ref` of openapi.yaml (`#/components/schemas/User`). */
export const resolve: Resolve = (ref) => {
  let value: unknown = document;
  for (const segment of ref.replace(/^#\//, '').split('/')) value = (value as Schema)[segment.replace(/~1/g, '/').replace(/~0/g, '~')];
  if (value === undefined) throw new Error(`openapi.yaml has no ${ref}`);
  return value as Schema;
};

const deref = (value: Schema): Schema => (typeof value.$ref === 'string' ? deref(resolve(value.$ref)) : value);

function parameters(list: unknown): Parameter[] {
  return ((list ?? []) as Schema[]).map((raw) => {
    const parameter = deref(raw);
    return {
      name: parameter.name as string,
      in: parameter.in as Parameter['in'],
      required: parameter.required === true,
      schema: parameter.schema as Schema,
    };
  });
}

/** Every operation of the contract. */
export function contractOperations(): FuzzOperation[] {
  const operations: FuzzOperation[] = [];
  for (const [path, item] of Object.entries(document.paths as Record<string, Schema>)) {
    for (const method of METHODS) {
      const operation = item[method] as Schema | undefined;
      if (!operation) continue;
      const all = [...parameters(item.parameters), ...parameters(operation.parameters)];
      const requestBody = operation.requestBody ? deref(operation.requestBody as Schema) : undefined;
      const content = requestBody?.content as Record<string, { schema: Schema }> | undefined;
      operations.push({
        operationId: operation.operationId as string,
        method: method.toUpperCase(),
        path,
        pathParameters: all.filter((parameter) => parameter.in === 'path'),
        queryParameters: all.filter((parameter) => parameter.in === 'query'),
        body: content?.['application/json']?.schema,
        // A counterexample names the operation instead of printing its schemas.
        [fc.toStringMethod]: () => `${method.toUpperCase()} ${path}`,
      } as FuzzOperation);
    }
  }
  return operations;
}
