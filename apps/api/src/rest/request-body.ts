// What each REST operation accepts as a request body, read from the contract: whether one is required, in which media
// types, and which of the contract's input schemas it is (so the domain does not validate it a second time).
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';
import type { OpenapiDocument } from '../contract/openapi-contract.js';
import type { InputSchema } from '../services/validation.js';

export interface BodyRule {
  required: boolean;
  mediaTypes: string[];
  /** The input schema of `components.schemas` the JSON body references (`UpdateUserInput`, …), if any. */
  schema?: InputSchema | undefined;
}

type OperationObject = {
  operationId?: string;
  requestBody?: { required?: boolean; content?: Record<string, { schema?: { $ref?: string } }>; $ref?: string };
};

/** operationId → body rule, for the operations that declare a `requestBody`. */
export function operationBodies(document: OpenapiDocument): Map<string, BodyRule> {
  // bound: per operation of openapi.yaml, built at start
  const rules = new Map<string, BodyRule>();
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item) as OperationObject[]) {
      const body = operation?.requestBody;
      if (!operation?.operationId || !body) continue;
      const reference = body.content?.['application/json']?.schema?.$ref?.split('/').at(-1);
      const schema = reference?.endsWith('Input') ? (reference as InputSchema) : undefined;
      rules.set(operation.operationId, { required: body.required === true, mediaTypes: Object.keys(body.content ?? {}), schema });
    }
  }
  return rules;
}

/**
 * Contract validation only sees bodies in a declared media type (Fastify picks the body schema by media type, and skips
 * validation when there is none for it, or no body at all). So: a required body that is missing → 400, and a body in a
 * media type the operation does not declare (e.g. text/plain, which Fastify parses as a string) → 415.
 */
export function checkBody(rule: BodyRule | undefined, request: FastifyRequest): void {
  if (!rule) return;
  if (request.body === undefined) {
    if (rule.required) throw new AppError('BAD_REQUEST', `A request body is required (${rule.mediaTypes.join(', ')})`);
    return;
  }
  const mediaType = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (!rule.mediaTypes.includes(mediaType)) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Unsupported media type "${mediaType}" (expected ${rule.mediaTypes.join(', ')})`);
  }
}
