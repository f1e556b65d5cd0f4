// Ajv for contract validation: query and path strings are coerced to their types, JSON bodies never are.
import { Ajv, type Options } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import { isStorableText } from '../text.js';

// ajv-formats is CommonJS: under ESM its plugin function is the `default` member of module.exports.
const addFormats = ajvFormats.default;

const common: Options = { allErrors: true, useDefaults: true, removeAdditional: false, strict: false };

export function createValidatorCompiler(): FastifySchemaCompiler<object> {
  const coercing = new Ajv({ ...common, coerceTypes: 'array' });
  const exact = new Ajv({ ...common, coerceTypes: false });
  addFormats(coercing);
  addFormats(exact);
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

/** The JSON-pointer path of the first string (key or value) PostgreSQL cannot store, or undefined. */
function unstorablePath(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return isStorableText(value) ? undefined : path;
  if (!value || typeof value !== 'object') return undefined;
  for (const [key, item] of Object.entries(value)) {
    const at = `${path}/${key}`;
    if (!isStorableText(key)) return at;
    const found = unstorablePath(item, at);
    if (found !== undefined) return found;
  }
  return undefined;
}

type Validate = ((data: unknown) => boolean) & { errors?: FastifySchemaValidationError[] | null | undefined };

/**
 * Every string of every REST input (path, query, body) is text PostgreSQL can store: a NUL byte was a 500 from the
 * database, an unpaired surrogate was stored as U+FFFD. Refused here once, with Ajv's error shape (400/422 naming it).
 */
function withStorableText(compile: () => Validate): Validate {
  let validate: Validate | undefined;
  const checked: Validate = (data) => {
    validate ??= compile();
    if (!validate(data)) {
      checked.errors = validate.errors;
      return false;
    }
    const path = unstorablePath(data);
    if (path === undefined) return true;
    checked.errors = [
      { keyword: 'storableText', instancePath: path, schemaPath: '#', params: {}, message: 'must not contain NUL characters or unpaired surrogates' },
    ];
    return false;
  };
  return checked;
}
