// Independent validation of real responses against openapi.yaml: each operation's declared responses, compiled with Ajv.
// (Fastify serializes through the same schemas, but fast-json-stringify only drops unknown properties: it does not check
// required fields, enums or formats. This checker does.)
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import { loadOpenapi } from '../../src/contract/openapi-contract.js';

const addFormats = ajvFormats.default;
const DOC_ID = 'openapi.yaml';
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

type Json = Record<string, unknown>;

export interface ContractOperation {
  operationId: string;
  method: string;
  path: string;
  /** Status code (as declared, e.g. '200') → JSON pointer of the response object, refs followed. */
  responses: Record<string, string>;
}

/** A JSON pointer segment, escaped (RFC 6901). */
const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

export class Contract {
  readonly document: Json;
  readonly operations = new Map<string, ContractOperation>();
  private readonly ajv: Ajv;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor() {
    this.document = structuredClone(loadOpenapi().document) as Json;
    this.ajv = new Ajv({ allErrors: true, strict: false, validateSchema: false });
    addFormats(this.ajv);
    this.ajv.addSchema(this.document, DOC_ID);
    const paths = this.document.paths as Record<string, Record<string, Json>>;
    for (const [path, item] of Object.entries(paths)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (!operation) continue;
        const operationId = operation.operationId as string;
        const responses: Record<string, string> = {};
        for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
          responses[status] = this.follow(`#/paths/${escape(path)}/${method}/responses/${status}`, response);
        }
        this.operations.set(operationId, { operationId, method: method.toUpperCase(), path, responses });
      }
    }
  }

  /** Follows `$ref`s from `value` (found at `pointer`) to the pointer of the object they name. */
  private follow(pointer: string, value: Json): string {
    let current = { pointer, value };
    while (typeof current.value.$ref === 'string') {
      const ref = current.value.$ref;
      current = { pointer: ref, value: this.at(ref) };
    }
    return current.pointer;
  }

  /** The value at a local JSON pointer (`#/a/b`). */
  at(pointer: string): Json {
    let value: unknown = this.document;
    for (const raw of pointer.replace(/^#\/?/, '').split('/')) {
      if (raw === '') continue;
      value = (value as Json)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
      if (value === undefined) throw new Error(`no ${pointer} in openapi.yaml`);
    }
    return value as Json;
  }

  private validator(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOC_ID}${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }

  /**
   * Every way `response` breaks the contract of `operationId`: an undeclared status, a body not matching the declared
   * schema (or a body where none is declared), a missing required header, or a header value off its schema.
   * Empty when the response is as documented.
   */
  check(operationId: string, response: { statusCode: number; headers: Record<string, unknown>; body: string }): string[] {
    const operation = this.operations.get(operationId);
    if (!operation) return [`operation ${operationId} is not in openapi.yaml`];
    const status = String(response.statusCode);
    const responsePointer = operation.responses[status] ?? operation.responses[`${status[0]}XX`] ?? operation.responses.default;
    if (!responsePointer) {
      return [`${operationId} answered ${status}, which it does not declare (declared: ${Object.keys(operation.responses).join(', ')})`];
    }
    const declared = this.at(responsePointer);
    const problems: string[] = [];

    const content = declared.content as Record<string, Json> | undefined;
    const contentType = String(response.headers['content-type'] ?? '');
    // The declared media type the answer is labelled with (application/json, or the vendor type when asked for it).
    const mediaType = Object.keys(content ?? {}).find((type) => contentType.split(';')[0]!.trim().toLowerCase() === type);
    if (content?.['application/json']) {
      if (!mediaType) problems.push(`content-type is "${contentType}", none of ${Object.keys(content).join(', ')}`);
      let body: unknown;
      try {
        body = JSON.parse(response.body);
      } catch {
        problems.push(`body is not JSON: ${response.body.slice(0, 200)}`);
      }
      if (body !== undefined) {
        const validate = this.validator(`${responsePointer}/content/${escape(mediaType ?? 'application/json')}/schema`);
        if (!validate(body)) problems.push(...describe(validate.errors, body));
      }
    } else if (content && Object.keys(content).length > 0) {
      problems.push(`declares only ${Object.keys(content).join(', ')}; this checker reads application/json`);
    } else if (response.body.length > 0) {
      problems.push(`declares no body but answered ${JSON.stringify(response.body.slice(0, 200))}`);
    }

    const headers = (declared.headers ?? {}) as Record<string, Json>;
    for (const [name, header] of Object.entries(headers)) {
      const headerPointer = this.follow(`${responsePointer}/headers/${escape(name)}`, header);
      const definition = this.at(headerPointer);
      const raw = response.headers[name.toLowerCase()];
      if (raw === undefined) {
        if (definition.required === true) problems.push(`required header ${name} is missing`);
        continue;
      }
      if (!definition.schema) continue;
      const schema = definition.schema as Json;
      const text = Array.isArray(raw) ? raw.join(', ') : String(raw);
      const value = schema.type === 'integer' || schema.type === 'number' ? (/^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text) : text;
      const validate = this.validator(`${headerPointer}/schema`);
      if (!validate(value)) problems.push(...describe(validate.errors, value).map((problem) => `header ${name}: ${problem}`));
    }
    return problems;
  }
}

function describe(errors: ErrorObject[] | null | undefined, value: unknown): string[] {
  return (errors ?? []).map((error) => {
    const params = JSON.stringify(error.params);
    return `${error.instancePath || '(root)'} ${error.message} ${params} — in ${JSON.stringify(value).slice(0, 300)}`;
  });
}
