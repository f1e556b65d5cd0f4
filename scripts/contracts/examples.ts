// The examples of openapi.yaml validate against their schemas: every `example` and `examples` of a schema, and every
// `example` and `examples[*].value` of a parameter, a header and a media type, named by its JSON pointer when it does
// not. Documentation, mock servers (Prism) and `lint:spectral` all serve these values as what the API answers or
// accepts; one left behind by a contract edit is a wrong promise.
//
// Validated with Ajv 2020-12 (the dialect of OpenAPI 3.1) and ajv-formats, as the server resolves them (apps/api's
// dependencies, as config-validator.ts does), with the options of its validator compiler
// (apps/api/src/rest/validator-compiler.ts) but `useDefaults`, which would write defaults into the example checked:
// parameters and headers with type coercion (they travel as text, and the server coerces them), bodies without.
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseYaml } from './yaml.js';

export const OPENAPI = 'openapi/openapi.yaml';

// The slice of Ajv's API used here: its types belong to apps/api's dependency, which scripts/ cannot resolve.
type Options = Record<string, unknown>;
type ErrorObject = { instancePath: string; keyword: string; message?: string };
type ValidateFunction = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
interface AjvClass {
  addSchema(schema: object, key: string): AjvClass;
  getSchema(key: string): ValidateFunction | undefined;
}

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);
const token = (name: string) => name.replaceAll('~', '~0').replaceAll('/', '~1');
const child = (at: string, ...names: (string | number)[]) => `${at}${names.map((name) => `/${token(String(name))}`).join('')}`;

/** Where an example sits, the schema it must satisfy (both JSON pointers), and whether the server coerces it. */
interface Example {
  at: string;
  value: unknown;
  schema: string;
  coerced: boolean;
}

/** Keywords whose value is a schema, a list of schemas, or a map of them (JSON Schema 2020-12). */
const SUBSCHEMA = [
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
];
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'dependentSchemas'];

function schemaExamples(schema: unknown, at: string, out: Example[], depth = 0): void {
  if (!isNode(schema) || depth > 64) return;
  if ('example' in schema) out.push({ at: child(at, 'example'), value: schema.example, schema: at, coerced: false });
  // In a 3.1 schema `examples` is JSON Schema's: a list of values.
  if (Array.isArray(schema.examples))
    schema.examples.forEach((value: unknown, index) => out.push({ at: child(at, 'examples', index), value, schema: at, coerced: false }));
  for (const keyword of SUBSCHEMA) schemaExamples(schema[keyword], child(at, keyword), out, depth + 1);
  for (const keyword of SUBSCHEMA_LISTS) {
    const list = schema[keyword];
    if (Array.isArray(list)) list.forEach((item: unknown, index) => schemaExamples(item, child(at, keyword, index), out, depth + 1));
  }
  for (const keyword of SUBSCHEMA_MAPS) {
    const map = schema[keyword];
    if (isNode(map)) for (const [name, item] of Object.entries(map)) schemaExamples(item, child(at, keyword, name), out, depth + 1);
  }
}

/** The value of an Example Object, following a local `$ref` (components.examples); undefined for `externalValue`. */
function exampleValue(example: unknown, document: Node): { value: unknown } | undefined {
  if (!isNode(example)) return undefined;
  if (typeof example.$ref === 'string' && example.$ref.startsWith('#/')) return exampleValue(resolve(document, example.$ref), document);
  return 'value' in example ? { value: example.value } : undefined;
}

function resolve(document: Node, ref: string): unknown {
  return ref
    .slice(2)
    .split('/')
    .map((part) => decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>((node, key) => (isNode(node) ? node[key] : undefined), document);
}

/** A parameter, header or media type: its own `example`/`examples` against its `schema`, and that schema's. */
function carrierExamples(carrier: unknown, at: string, document: Node, coerced: boolean, out: Example[]): void {
  if (!isNode(carrier) || typeof carrier.$ref === 'string') return; // a reference is checked where it is defined
  const schema = child(at, 'schema');
  schemaExamples(carrier.schema, schema, out);
  if (isNode(carrier.schema) && 'example' in carrier) out.push({ at: child(at, 'example'), value: carrier.example, schema, coerced });
  if (isNode(carrier.schema) && isNode(carrier.examples)) {
    for (const [name, example] of Object.entries(carrier.examples)) {
      const found = exampleValue(example, document);
      if (found)
        out.push({
          at: child(at, 'examples', name, ...(isNode(example) && '$ref' in example ? [] : ['value'])),
          value: found.value,
          schema,
          coerced,
        });
    }
  }
  // A parameter or header described by `content` instead of `schema`: its media types, not coerced (they are parsed).
  if (isNode(carrier.content))
    for (const [mediaType, media] of Object.entries(carrier.content)) carrierExamples(media, child(at, 'content', mediaType), document, false, out);
}

function responseExamples(response: unknown, at: string, document: Node, out: Example[]): void {
  if (!isNode(response) || typeof response.$ref === 'string') return;
  if (isNode(response.headers))
    for (const [name, header] of Object.entries(response.headers)) carrierExamples(header, child(at, 'headers', name), document, true, out);
  if (isNode(response.content))
    for (const [mediaType, media] of Object.entries(response.content)) carrierExamples(media, child(at, 'content', mediaType), document, false, out);
}

function requestBodyExamples(body: unknown, at: string, document: Node, out: Example[]): void {
  if (!isNode(body) || typeof body.$ref === 'string' || !isNode(body.content)) return;
  for (const [mediaType, media] of Object.entries(body.content)) carrierExamples(media, child(at, 'content', mediaType), document, false, out);
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const entries = (value: unknown) => (isNode(value) ? Object.entries(value) : []);

/** Every example of the document, where it is defined (a `$ref` to it is not a second example). */
export function collectExamples(document: Node): Example[] {
  const out: Example[] = [];
  const components = isNode(document.components) ? document.components : {};
  for (const [name, schema] of entries(components.schemas)) schemaExamples(schema, child('', 'components', 'schemas', name), out);
  for (const [name, parameter] of entries(components.parameters))
    carrierExamples(parameter, child('', 'components', 'parameters', name), document, true, out);
  for (const [name, header] of entries(components.headers)) carrierExamples(header, child('', 'components', 'headers', name), document, true, out);
  for (const [name, body] of entries(components.requestBodies))
    requestBodyExamples(body, child('', 'components', 'requestBodies', name), document, out);
  for (const [name, response] of entries(components.responses)) responseExamples(response, child('', 'components', 'responses', name), document, out);
  for (const [route, item] of entries(document.paths)) {
    if (!isNode(item)) continue;
    const at = child('', 'paths', route);
    if (Array.isArray(item.parameters))
      item.parameters.forEach((parameter: unknown, index) => carrierExamples(parameter, child(at, 'parameters', index), document, true, out));
    for (const method of METHODS) {
      const operation = item[method];
      if (!isNode(operation)) continue;
      const here = child(at, method);
      if (Array.isArray(operation.parameters))
        operation.parameters.forEach((parameter: unknown, index) =>
          carrierExamples(parameter, child(here, 'parameters', index), document, true, out),
        );
      requestBodyExamples(operation.requestBody, child(here, 'requestBody'), document, out);
      for (const [status, response] of entries(operation.responses)) responseExamples(response, child(here, 'responses', status), document, out);
    }
  }
  return out;
}

/** Ajv 2020 and ajv-formats as apps/api resolves them (they are its dependencies, not the workspace root's). */
function serverAjv(repoRoot: string, options: Options): AjvClass {
  const require = createRequire(path.join(repoRoot, 'apps/api/package.json'));
  const { Ajv2020 } = require('ajv/dist/2020') as { Ajv2020: new (options: Options) => AjvClass };
  const addFormats = require('ajv-formats') as { default: (ajv: AjvClass) => AjvClass };
  return addFormats.default(new Ajv2020(options));
}

const COMMON: Options = { allErrors: true, strict: false };
const DOCUMENT_ID = 'openapi.json';

const describeErrors = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? []).map((error) => `${error.instancePath || '(the value)'} ${error.message ?? error.keyword}`).join('; ');

/** `<pointer>: <why>` for each example of the document that its schema refuses. */
export function exampleProblems(document: Node, repoRoot: string): string[] {
  // The whole document is registered once, so that a schema's `$ref`s resolve as in the contract.
  const exact = serverAjv(repoRoot, { ...COMMON, coerceTypes: false });
  const coercing = serverAjv(repoRoot, { ...COMMON, coerceTypes: 'array' });
  for (const ajv of [exact, coercing]) ajv.addSchema(document, DOCUMENT_ID);
  const problems: string[] = [];
  for (const example of collectExamples(document)) {
    const ajv = example.coerced ? coercing : exact;
    try {
      const validate = ajv.getSchema(`${DOCUMENT_ID}#${example.schema}`);
      if (!validate) problems.push(`${example.at}: its schema ${example.schema} cannot be found`);
      // Coercion rewrites the value it checks: a copy keeps the document as written.
      else if (!validate(example.coerced ? structuredClone(example.value) : example.value))
        problems.push(`${example.at}: does not validate against ${example.schema}: ${describeErrors(validate.errors)}`);
    } catch (error) {
      problems.push(`${example.at}: its schema ${example.schema} does not compile: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return problems;
}

export async function checkExamples(repoRoot: string): Promise<string[]> {
  const document = parseYaml(await readFile(path.join(repoRoot, OPENAPI), 'utf8')) as Node;
  return exampleProblems(document, repoRoot);
}
