// Values drawn from the contract's own schemas (openapi.yaml), for the suites that walk every field of every input:
// a valid value per field (the round trip), and the values just inside and just outside each bound (door parity).
import { loadOpenapi } from '../../src/openapi-contract.js';

export interface FieldSchema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  anyOf?: FieldSchema[];
  properties?: Record<string, FieldSchema>;
  required?: string[];
}

const schemas = () => (loadOpenapi().document.components as { schemas: Record<string, FieldSchema> }).schemas;

/** A schema with its `$ref`s followed (one level of `anyOf` merged: the first alternative that is not a `const`). */
export function resolve(schema: FieldSchema): FieldSchema {
  if (schema.$ref) return resolve(schemas()[schema.$ref.split('/').at(-1)!]!);
  return schema;
}

/** The properties of a component schema, each resolved. */
export function fieldsOf(schemaName: string): Record<string, FieldSchema> {
  const schema = resolve({ $ref: `#/components/schemas/${schemaName}` });
  return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([field, property]) => [field, resolve(property)]));
}

const types = (schema: FieldSchema) => (Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : []);

let serial = 0;
/** A valid value of the field, different on every call (so a write is seen to change it), lower-case for e-mails. */
export function validValue(field: string, schema: FieldSchema): unknown {
  serial += 1;
  if (schema.enum) return schema.enum.find((value) => value !== 'USER' && value !== 'pending') ?? schema.enum[0];
  if (types(schema).includes('integer')) {
    const min = schema.minimum ?? 0;
    const max = Math.min(schema.maximum ?? min + 1000, min + 1000);
    return min + ((serial * 37) % (max - min + 1));
  }
  if (types(schema).includes('boolean')) return true;
  if (schema.format === 'email') return `round-trip-${serial}-${field.toLowerCase()}@example.com`;
  const text = `${field} value ${serial}`;
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? text.length;
  return text.length > max ? text.slice(0, max) : text.padEnd(min, 'x');
}

export interface BoundCase {
  what: string;
  value: unknown;
}

/** Look-alikes of an address (SPEC §1: ASCII only, no invisible or control characters): each must be refused. */
export const LOOK_ALIKE_EMAILS: BoundCase[] = [
  { what: 'a Cyrillic а (U+0430)', value: '\u0430dmin@example.com' },
  { what: 'a zero-width space (U+200B)', value: 'ad\u200Bmin@example.com' },
  { what: 'a dotless ı (U+0131)', value: 'adm\u0131n@example.com' },
  { what: 'fullwidth letters', value: '\uFF41dmin@example.com' },
  { what: 'a right-to-left override (U+202E)', value: 'admin\u202E@example.com' },
  { what: 'a control character (U+0007)', value: 'ad\u0007min@example.com' },
  { what: 'a NUL character', value: 'ad\u0000min@example.com' },
];

/**
 * Values just inside and just outside each bound the field's schema declares, as GraphQL's type system lets them
 * through (integers stay integers, strings strings): the domain, not the transport, must judge them.
 */
export function boundCases(field: string, schema: FieldSchema, unique: () => string): BoundCase[] {
  const cases: BoundCase[] = [];
  if (schema.format === 'email') {
    const domain = '@example.com';
    cases.push({ what: 'an address', value: `${unique()}${domain}` });
    if (schema.maxLength) {
      const local = unique();
      const longest = `${local}@${'d'.repeat(schema.maxLength - local.length - 1 - 4 - 60)}.${'e'.repeat(59)}.com`;
      cases.push({ what: `${schema.maxLength} characters`, value: longest.slice(0, schema.maxLength) });
      cases.push({ what: `${schema.maxLength + 1} characters`, value: `x${longest}`.slice(0, schema.maxLength + 1) });
    }
    cases.push(...LOOK_ALIKE_EMAILS, { what: 'no @', value: 'nobody.example.com' });
    return cases.map((entry) => ({ ...entry, what: `${field}: ${entry.what}` }));
  }
  if (types(schema).includes('string')) {
    const min = schema.minLength ?? 0;
    if (min > 0) cases.push({ what: `${min} characters`, value: 'a'.repeat(min) }, { what: `${min - 1} characters`, value: 'a'.repeat(min - 1) });
    if (schema.maxLength !== undefined) {
      cases.push({ what: `${schema.maxLength} characters`, value: 'b'.repeat(schema.maxLength) });
      cases.push({ what: `${schema.maxLength + 1} characters`, value: 'b'.repeat(schema.maxLength + 1) });
      cases.push({ what: `${schema.maxLength} emoji (characters, not UTF-16 units)`, value: '🙂'.repeat(Math.min(schema.maxLength, 60)) });
    }
    if (schema.pattern) cases.push({ what: 'only white space', value: ' '.repeat(Math.max(min, 2)) });
    cases.push({ what: 'a NUL character', value: `a\u0000${'a'.repeat(Math.max(min, 1))}` });
  }
  if (types(schema).includes('integer')) {
    if (schema.minimum !== undefined)
      cases.push({ what: `${schema.minimum}`, value: schema.minimum }, { what: `${schema.minimum - 1}`, value: schema.minimum - 1 });
    if (schema.maximum !== undefined && schema.maximum < 2 ** 31 - 1)
      cases.push({ what: `${schema.maximum}`, value: schema.maximum }, { what: `${schema.maximum + 1}`, value: schema.maximum + 1 });
    if (types(schema).includes('null')) cases.push({ what: 'null', value: null });
  }
  return cases.map((entry) => ({ ...entry, what: `${field}: ${entry.what}` }));
}
