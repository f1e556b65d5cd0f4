// Names the failing fields of an Ajv validation error the way clients read them (`users[0].email`).
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import { clip, type FieldError } from './app-error.js';

/** One failure of the contract's Ajv validation, as Fastify hands it over (`error.validation`). */
export type AjvFailure = FastifySchemaValidationError;

/** The contract's bound on `errors[]` (maxItems); `field` is cut to its own in errorBody (rest/error-envelope.ts). */
export const MAX_FIELD_ERRORS = 100;
/** A client's property name as echoed back: a body of 1 MiB may hold a key of nearly that length. */
const echoed = (name: string) => clip(name, 128);

function fieldPath(instancePath: string): string {
  return instancePath
    .split('/')
    .filter(Boolean)
    .map((part, index) => (/^\d+$/.test(part) ? `[${part}]` : index === 0 ? echoed(part) : `.${echoed(part)}`))
    .join('');
}

function join(base: string, name: string): string {
  return base ? `${base}.${name}` : name;
}

/** Every failing field once, with its first failure in Ajv's order (an empty name is both too short and blank: one
 * entry), at most MAX_FIELD_ERRORS of them (Ajv reports all: a body of 10,000 unknown keys would otherwise be answered
 * with 10,000 errors). */
export function fieldErrors(errors: AjvFailure[]): FieldError[] {
  // bound: per call
  const seen = new Set<string>();
  const result: FieldError[] = [];
  for (const error of errors) {
    const base = fieldPath(error.instancePath);
    const params = error.params as Record<string, unknown>;
    let field = base;
    let message = error.message ?? 'is invalid';
    if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
      field = join(base, params.missingProperty);
      message = 'is required';
    } else if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
      field = join(base, echoed(params.additionalProperty));
      message = 'is not allowed';
    }
    if (!seen.has(field)) {
      seen.add(field);
      result.push({ field: field || '(body)', message });
      if (result.length === MAX_FIELD_ERRORS) break;
    }
  }
  return result;
}
