// Ajv for the REST door's contract validation: query and path strings are coerced to their types, JSON bodies never are.
import type { FastifySchemaCompiler } from 'fastify';
import { contractAjv, withStorableText } from '../contract/json-schema.js';

export function createValidatorCompiler(): FastifySchemaCompiler<object> {
  const exact = contractAjv('exact');
  const coercing = contractAjv('coercing');
  // Compiled on a route part's first request: compiling every route's schemas at start cost ~0.25 s of it.
  return ({ schema, httpPart }) =>
    withStorableText(() => (httpPart === 'body' ? exact : coercing).compile(httpPart === 'headers' ? lowerCaseHeaderNames(schema) : schema));
}

/**
 * Node lower-cases the names of request headers; the contract writes `If-Match`, `Idempotency-Key`. Fastify lower-cases
 * a header schema's names itself only for its own compiler: with a custom one (this) it leaves them, and a header
 * declared as `If-None-Match` was never validated (found by a test sending a 2,000-character one).
 */
function lowerCaseHeaderNames(schema: object): object {
  const { properties, required, ...rest } = schema as { properties?: Record<string, unknown>; required?: string[] };
  return {
    ...rest,
    ...(properties ? { properties: Object.fromEntries(Object.entries(properties).map(([name, value]) => [name.toLowerCase(), value])) } : {}),
    ...(required ? { required: required.map((name) => name.toLowerCase()) } : {}),
  };
}
