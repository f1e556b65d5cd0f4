// Values drawn from the contract's own schemas (openapi.yaml), for the suites that walk every field of every input:
// a valid value per field (the round trip), and the values just inside and just outside each bound (door parity).
import { loadOpenapi } from '../../src/contract/openapi-contract.js';

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
  /** Whether the value meets the field's rule (SPEC §1), as the bound it was drawn from says: the oracle of a walk. */
  valid: boolean;
}

/** Look-alikes of an address (SPEC §1: ASCII only, no invisible or control characters): each must be refused. */
export const LOOK_ALIKE_EMAILS: BoundCase[] = [
  { what: 'a Cyrillic а (U+0430)', value: '\u0430dmin@example.com', valid: false },
  { what: 'a zero-width space (U+200B)', value: 'ad\u200Bmin@example.com', valid: false },
  { what: 'a dotless ı (U+0131)', value: 'adm\u0131n@example.com', valid: false },
  { what: 'fullwidth letters', value: '\uFF41dmin@example.com', valid: false },
  { what: 'a right-to-left override (U+202E)', value: 'admin\u202E@example.com', valid: false },
  { what: 'a control character (U+0007)', value: 'ad\u0007min@example.com', valid: false },
  { what: 'a NUL character', value: 'ad\u0000min@example.com', valid: false },
];

/**
 * Whether a text or integer value meets a field's declared bounds (lengths in characters, pattern, range, null), with
 * no NUL character (which no text column stores): for the values a walk draws, and for what an entry point stored.
 */
export function meetsBounds(schema: FieldSchema, value: unknown): boolean {
  if (value === null) return types(schema).includes('null');
  if (typeof value === 'number') {
    return Number.isInteger(value) && value >= (schema.minimum ?? -Infinity) && value <= (schema.maximum ?? Infinity);
  }
  if (typeof value !== 'string') return false;
  const length = [...value].length;
  return (
    length >= (schema.minLength ?? 0) &&
    length <= (schema.maxLength ?? Infinity) &&
    (schema.pattern === undefined || new RegExp(schema.pattern, 'u').test(value)) &&
    !value.includes('\u0000')
  );
}

/**
 * Values just inside and just outside each bound the field's schema declares, as GraphQL's type system lets them
 * through (integers stay integers, strings strings): the domain, not the transport, must judge them. Each says whether
 * it is valid; an enum's cases (a declared value, and one that is not) only suit a door that sends the enum as text.
 */
export function boundCases(field: string, schema: FieldSchema, unique: () => string): BoundCase[] {
  const cases: BoundCase[] = [];
  const push = (what: string, value: unknown) => cases.push({ what, value, valid: meetsBounds(schema, value) });
  if (schema.enum) {
    cases.push({ what: `${String(schema.enum.at(-1))}`, value: schema.enum.at(-1), valid: true });
    cases.push({ what: 'a value outside the enum', value: 'not-one-of-them', valid: false });
    return cases.map((entry) => ({ ...entry, what: `${field}: ${entry.what}` }));
  }
  if (schema.format === 'email') {
    const domain = '@example.com';
    cases.push({ what: 'an address', value: `${unique()}${domain}`, valid: true });
    if (schema.maxLength) {
      const local = unique();
      const longest = `${local}@${'d'.repeat(schema.maxLength - local.length - 1 - 4 - 60)}.${'e'.repeat(59)}.com`;
      cases.push({ what: `${schema.maxLength} characters`, value: longest.slice(0, schema.maxLength), valid: true });
      cases.push({ what: `${schema.maxLength + 1} characters`, value: `x${longest}`.slice(0, schema.maxLength + 1), valid: false });
    }
    cases.push(...LOOK_ALIKE_EMAILS, { what: 'no @', value: 'nobody.example.com', valid: false });
    return cases.map((entry) => ({ ...entry, what: `${field}: ${entry.what}` }));
  }
  if (types(schema).includes('string')) {
    const min = schema.minLength ?? 0;
    if (min > 0) {
      push(`${min} characters`, 'a'.repeat(min));
      push(`${min - 1} characters`, 'a'.repeat(min - 1));
    }
    if (schema.maxLength !== undefined) {
      push(`${schema.maxLength} characters`, 'b'.repeat(schema.maxLength));
      push(`${schema.maxLength + 1} characters`, 'b'.repeat(schema.maxLength + 1));
      const emoji = Math.min(schema.maxLength, 60);
      push(`${emoji} emoji (characters, not UTF-16 units)`, '🙂'.repeat(emoji));
    }
    if (schema.pattern) push('only white space', ' '.repeat(Math.max(min, 2)));
    push('a NUL character', `a\u0000${'a'.repeat(Math.max(min, 1))}`);
  }
  if (types(schema).includes('integer')) {
    if (schema.minimum !== undefined) {
      push(`${schema.minimum}`, schema.minimum);
      push(`${schema.minimum - 1}`, schema.minimum - 1);
    }
    if (schema.maximum !== undefined && schema.maximum < 2 ** 31 - 1) {
      push(`${schema.maximum}`, schema.maximum);
      push(`${schema.maximum + 1}`, schema.maximum + 1);
    }
    if (types(schema).includes('null')) push('null', null);
  }
  return cases.map((entry) => ({ ...entry, what: `${field}: ${entry.what}` }));
}
