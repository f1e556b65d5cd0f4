// Ajv for contract validation: query and path strings are coerced to their types, JSON bodies never are.
import { Ajv, type Options } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS: under ESM its plugin function is the `default` member of module.exports.
const addFormats = ajvFormats.default;

const common: Options = { allErrors: true, useDefaults: true, removeAdditional: false, strict: false };

export function createValidatorCompiler(): FastifySchemaCompiler<object> {
  const coercing = new Ajv({ ...common, coerceTypes: 'array' });
  const exact = new Ajv({ ...common, coerceTypes: false });
  addFormats(coercing);
  addFormats(exact);
  return ({ schema, httpPart }) => (httpPart === 'body' ? exact : coercing).compile(schema);
}
