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
  /**
   * The most bytes a body this schema allows can take (every string escaped at its longest, with room for formatting),
   * when the schema bounds it: a larger body cannot be valid and is refused (413) before it is read or parsed. A 1 MB
   * e-mail at the login is then refused for its size, not parsed, validated and counted (SPEC §0.2).
   */
  bodyLimit?: number | undefined;
}

type Schema = Record<string, unknown>;
/** Room for a client's formatting (indentation, spaces): a valid body is refused for its size only past this. */
const FORMATTING_ROOM = 16 * 1024;

/** The longest JSON text a schema allows, or Infinity when it does not bound it. Written by hand: no kept library computes it. */
function longestJson(schema: unknown, document: OpenapiDocument, depth = 0): number {
  if (!schema || typeof schema !== 'object' || depth > 32) return Infinity;
  const node = schema as Schema;
  if (typeof node.$ref === 'string') {
    const target = node.$ref
      .split('/')
      .slice(1)
      .reduce<unknown>((at, part) => (at as Schema | undefined)?.[part], document);
    return longestJson(target, document, depth + 1);
  }
  const alternatives = (node.anyOf ?? node.oneOf) as unknown[] | undefined;
  if (alternatives) return Math.max(...alternatives.map((alternative) => longestJson(alternative, document, depth + 1)));
  if (Array.isArray(node.enum)) return Math.max(...node.enum.map((value) => JSON.stringify(value).length));
  if ('const' in node) return JSON.stringify(node.const).length;
  const types = [node.type].flat();
  return Math.max(
    ...types.map((type) => {
      switch (type) {
        case 'string':
          // \uXXXX is the longest any UTF-16 unit can be written, and the quotes.
          return typeof node.maxLength === 'number' ? node.maxLength * 6 + 2 : Infinity;
        case 'integer':
        case 'number':
          return 32;
        case 'boolean':
          return 5;
        case 'null':
          return 4;
        case 'array':
          return typeof node.maxItems === 'number' ? node.maxItems * (longestJson(node.items, document, depth + 1) + 1) + 2 : Infinity;
        case 'object': {
          if (node.additionalProperties !== false) return Infinity;
          const properties = Object.entries((node.properties ?? {}) as Record<string, unknown>);
          return properties.reduce((sum, [name, value]) => sum + JSON.stringify(name).length + 2 + longestJson(value, document, depth + 1), 2);
        }
        default:
          return Infinity;
      }
    }),
  );
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
      const json = body.content?.['application/json']?.schema;
      const reference = json?.$ref?.split('/').at(-1);
      const schema = reference?.endsWith('Input') ? (reference as InputSchema) : undefined;
      const longest = Object.keys(body.content ?? {}).length === 1 ? longestJson(json, document) : Infinity;
      const bodyLimit = Number.isFinite(longest) ? 2 * longest + FORMATTING_ROOM : undefined;
      rules.set(operation.operationId, { required: body.required === true, mediaTypes: Object.keys(body.content ?? {}), schema, bodyLimit });
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
