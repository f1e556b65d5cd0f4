// Names the failing fields of an Ajv validation error the way clients read them (`users[0].email`).
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import type { FieldError } from '../errors.js';

function fieldPath(instancePath: string): string {
  return instancePath
    .split('/')
    .filter(Boolean)
    .map((part, index) => (/^\d+$/.test(part) ? `[${part}]` : index === 0 ? part : `.${part}`))
    .join('');
}

function join(base: string, name: string): string {
  return base ? `${base}.${name}` : name;
}

export function fieldErrors(errors: FastifySchemaValidationError[]): FieldError[] {
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
      field = join(base, params.additionalProperty);
      message = 'is not allowed';
    }
    const key = `${field}\n${message}`;
    if (!seen.has(key)) {
      seen.add(key);
      result.push({ field: field || '(body)', message });
    }
  }
  return result;
}
