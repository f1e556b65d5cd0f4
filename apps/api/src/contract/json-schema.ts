// The contract's JSON Schema validation, one setup for both doors: the REST door compiles each route's schemas with it
// (rest/validator-compiler.ts), the domain compiles openapi.yaml's input schemas with it (services/validation.ts), so a
// value gets the same verdict and the same words on either door.
import { Ajv, type Options } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
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
