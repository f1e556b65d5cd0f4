// fast-check arbitraries from the JSON Schemas of openapi.yaml: values that satisfy a schema, and mutations of them that do not.
import fc from 'fast-check';

export type Schema = Record<string, unknown>;
/** Resolves a local `$ref` (`#/components/...`) of the contract. */
export type Resolve = (ref: string) => Schema;

/** Strings that make handlers, parsers and the database work: unicode, control characters, SQL and JSON look-alikes. */
export const nastyString = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string(),
    fc.string({ unit: 'grapheme', maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.constantFrom(
      '',
      ' ',
      '\u0000',
      '\uFFFF',
      '\uD800',
      '😀',
      'null',
      'undefined',
      'NaN',
      '-0',
      '1e309',
      "' OR 1=1 --",
      '%00',
      '__proto__',
      '{"a":1}',
      '<script>',
    ),
    // Otherwise valid text with one character PostgreSQL cannot store (NUL) or UTF-8 cannot carry (a lone surrogate):
    // plain random strings rarely pass a field's other rules with one inside, so they never reached the database.
    fc.tuple(fc.string({ minLength: 1, maxLength: 20 }), poison(), fc.string({ maxLength: 20 })).map(([head, bad, tail]) => `${head}${bad}${tail}`),
  );

/** One character the database cannot store or UTF-8 cannot encode. */
export const poison = (): fc.Arbitrary<string> => fc.constantFrom('\u0000', '\uD800', '\uDBFF', '\uDC00', '\uDFFF');

function stringFor(schema: Schema): fc.Arbitrary<string> {
  const minLength = (schema.minLength as number | undefined) ?? 0;
  const maxLength = Math.min((schema.maxLength as number | undefined) ?? 60, minLength + 60);
  if (schema.format === 'email') {
    return fc.emailAddress().filter((email) => email.length <= ((schema.maxLength as number | undefined) ?? 254));
  }
  if (typeof schema.pattern === 'string') {
    return fc.stringMatching(new RegExp(schema.pattern)).filter((value) => value.length >= minLength && value.length <= maxLength);
  }
  return fc.string({ unit: 'grapheme', minLength, maxLength });
}

function integerFor(schema: Schema): fc.Arbitrary<number> {
  const min = (schema.minimum as number | undefined) ?? -2_147_483_648;
  const max = (schema.maximum as number | undefined) ?? 2_147_483_647;
  return fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max));
}

/** A value valid against `schema` (object properties: every required one, some optional ones). */
export function valid(schema: Schema, resolve: Resolve): fc.Arbitrary<unknown> {
  if (typeof schema.$ref === 'string') return valid(resolve(schema.$ref), resolve);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if (Array.isArray(schema.oneOf)) return fc.oneof(...(schema.oneOf as Schema[]).map((branch) => valid(branch, resolve)));
  const types = [schema.type ?? 'object'].flat() as string[];
  if (types.length > 1) return fc.oneof(...types.map((type) => valid({ ...schema, type }, resolve)));
  switch (types[0]) {
    case 'string':
      return stringFor(schema);
    case 'integer':
      return integerFor(schema);
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = (schema.minItems as number | undefined) ?? 0;
      // Few items: a valid batch of users with passwords costs one argon2 hash per item.
      const maxLength = Math.min((schema.maxItems as number | undefined) ?? 5, minLength + 4);
      return fc.array(valid((schema.items as Schema | undefined) ?? {}, resolve), { minLength, maxLength });
    }
    default: {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = (schema.required ?? []) as string[];
      const record = fc.record(Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, valid(property, resolve)])), {
        requiredKeys: required.filter((name) => name in properties),
      }) as fc.Arbitrary<Record<string, unknown>>;
      const minProperties = (schema.minProperties as number | undefined) ?? 0;
      return record.filter((value) => Object.keys(value).length >= minProperties);
    }
  }
}

/** Nested objects (or arrays) `depth` levels deep. */
export function deeplyNested(depth: number, asArray: boolean): unknown {
  let value: unknown = asArray ? [] : {};
  for (let i = 0; i < depth; i++) value = asArray ? [value] : { a: value };
  return value;
}

type Mutation = (value: unknown) => fc.Arbitrary<unknown>;

const asObject = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** Ways to break a valid value: each takes the value and yields a broken one (or the value, when it does not apply). */
const MUTATIONS: Mutation[] = [
  // the wrong type for the whole body
  () => fc.oneof(fc.constant(null), fc.string(), fc.integer(), fc.boolean(), fc.array(fc.anything(), { maxLength: 3 })),
  // a required field (or any field) left out
  (value) => {
    const object = asObject(value);
    const keys = object ? Object.keys(object) : [];
    return keys.length === 0 ? fc.constant(value) : fc.constantFrom(...keys).map((key) => ({ ...object, [key]: undefined }));
  },
  // a field with the wrong type, or null
  (value) => {
    const object = asObject(value);
    const keys = object ? Object.keys(object) : [];
    if (keys.length === 0) return fc.constant(value);
    return fc
      .tuple(fc.constantFrom(...keys), fc.oneof(fc.constant(null), fc.anything({ maxDepth: 2 }), nastyString()))
      .map(([key, wrong]) => ({ ...object, [key]: wrong }));
  },
  // an extra field, including prototype-looking names
  (value) =>
    fc
      .tuple(
        fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'prototype', 'id', 'role', 'passwordHash', 'tokenVersion')),
        fc.anything({ maxDepth: 2 }),
      )
      // A computed key makes `__proto__` an own property, which JSON.stringify then sends.
      .map(([key, extra]) => (asObject(value) ? { ...asObject(value), [key]: extra } : value)),
  // a very long string in a field
  (value) => {
    const object = asObject(value);
    const keys = object ? Object.keys(object) : [];
    if (keys.length === 0) return fc.constant(value);
    return fc
      .tuple(fc.constantFrom(...keys), fc.integer({ min: 201, max: 300_000 }), fc.constantFrom('x', 'é', '😀', ' '))
      .map(([key, length, unit]) => ({ ...object, [key]: unit.repeat(length) }));
  },
  // deep nesting, in place of a field or of the whole body
  (value) => {
    const object = asObject(value);
    const keys = object ? Object.keys(object) : [];
    return fc
      .tuple(fc.integer({ min: 10, max: 2_000 }), fc.boolean(), keys.length === 0 ? fc.constant(undefined) : fc.option(fc.constantFrom(...keys)))
      .map(([depth, asArray, key]) => (key == null ? deeplyNested(depth, asArray) : { ...object, [key]: deeplyNested(depth, asArray) }));
  },
  // a valid string field with a NUL byte or a lone surrogate inside (it passes length and format rules)
  (value) => {
    const object = asObject(value);
    const keys = object ? Object.keys(object).filter((key) => typeof object[key] === 'string') : [];
    if (keys.length === 0) return fc.constant(value);
    return fc.tuple(fc.constantFrom(...keys), poison(), fc.nat()).map(([key, bad, at]) => {
      const text = object![key] as string;
      const cut = text.length === 0 ? 0 : at % (text.length + 1);
      return { ...object, [key]: `${text.slice(0, cut)}${bad}${text.slice(cut)}` };
    });
  },
  // numbers at and past every edge
  (value) => {
    const object = asObject(value);
    const keys = object ? Object.keys(object) : [];
    if (keys.length === 0) return fc.constant(value);
    const edge = fc.constantFrom(-1, 0, 1.5, -2_147_483_649, 2_147_483_648, Number.MAX_SAFE_INTEGER + 2, 1e300, -1e300, 5e-324);
    return fc.tuple(fc.constantFrom(...keys), edge).map(([key, number]) => ({ ...object, [key]: number }));
  },
];

/** A value broken against `schema` in one or two ways, starting from a valid one. */
export function mutated(schema: Schema, resolve: Resolve): fc.Arbitrary<unknown> {
  const mutation = fc.constantFrom(...MUTATIONS);
  return fc
    .tuple(valid(schema, resolve), mutation, fc.option(mutation, { nil: undefined }))
    .chain(([value, first, second]) => first(value).chain((once) => (second ? second(once) : fc.constant(once))));
}
