// The contract's JSON Schema validation, one setup for both doors: the REST door compiles each route's schemas with it
// (rest/validator-compiler.ts), the domain compiles openapi.yaml's input schemas with it (services/validation.ts), so a
// value gets the same verdict and the same words on either door.
import { Ajv, type Options } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import { loadOpenapi } from './openapi-contract.js';
import { isStorableText } from './text.js';

// ajv-formats is CommonJS: under ESM its plugin function is the `default` member of module.exports.
const addFormats = ajvFormats.default;

const common: Options = { allErrors: true, useDefaults: true, removeAdditional: false, strict: false };

/**
 * A new Ajv with the contract's settings and formats: `exact` for JSON bodies and the domain's inputs (never coerced: a
 * string "42" is not an age), `coercing` for query and path strings (coerced to their declared types). A new one per
 * app, since Ajv keeps every schema it compiled.
 */
export function contractAjv(kind: 'exact' | 'coercing'): Ajv {
  const ajv = new Ajv({ ...common, coerceTypes: kind === 'exact' ? false : 'array' });
  addFormats(ajv);
  return ajv;
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

/** The character class of openapi.yaml's text patterns: what PostgreSQL's `text` cannot hold (NUL, unpaired surrogates). */
const UNSTORABLE_CLASS = '[^\\u0000\\uD800-\\uDFFF]';
const UNSTORABLE = 'must not contain NUL characters or unpaired surrogates';

/** The value at an Ajv instance path of `data`. */
function valueAt(data: unknown, instancePath: string): unknown {
  let node = data;
  for (const part of instancePath.split('/').slice(1))
    node = (node as Record<string, unknown> | null)?.[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  return node;
}

/**
 * A failure of one of the contract's patterns in the words it had before the contract stated the rule itself (SPEC
 * §0.3): the e-mail pattern is ajv-formats' `email`, so "must match format "email""; the text pattern fails either for
 * an unstorable character or for a blank value ("must match pattern "\S"", its one required non-space character).
 */
function worded(error: FastifySchemaValidationError, data: unknown): FastifySchemaValidationError {
  const pattern = (error.params as { pattern?: unknown }).pattern;
  if (error.keyword !== 'pattern' || typeof pattern !== 'string') return error;
  if (pattern === emailPattern()) return { ...error, message: 'must match format "email"' };
  if (!pattern.includes(UNSTORABLE_CLASS)) return error;
  const value = valueAt(data, error.instancePath);
  return { ...error, message: typeof value === 'string' && !isStorableText(value) ? UNSTORABLE : 'must match pattern "\\S"' };
}

let email: string | undefined;
/** The pattern of the contract's `Email`. */
const emailPattern = () =>
  (email ??= (loadOpenapi().document as unknown as { components: { schemas: { Email: { pattern: string } } } }).components.schemas.Email.pattern);

export type Validate = ((data: unknown) => boolean) & { errors?: FastifySchemaValidationError[] | null | undefined };

/**
 * A validator, compiled on its first use, that also requires every string of the input (keys and values) to be text
 * PostgreSQL can store: a NUL byte was a 500 from the database, an unpaired surrogate was stored as U+FFFD. Refused with
 * Ajv's error shape (400/422 naming it).
 */
export function withStorableText(compile: () => Validate): Validate {
  let validate: Validate | undefined;
  const checked: Validate = (data) => {
    validate ??= compile();
    if (!validate(data)) {
      checked.errors = validate.errors?.map((error) => worded(error, data));
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
