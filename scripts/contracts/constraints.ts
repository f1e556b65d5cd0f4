// What breaks a consumer that Optic's BreakingChangesRuleset lets through (checked on the inlined documents of
// breaking.ts): a request that was valid and is now refused, or an answer a client relied on that may now differ.
//
// Written by hand: Optic's ruleset flags removed operations and properties, request properties and parameters made
// required, required parameters added, request enum values removed, narrowed types, response properties made optional
// and response enum values added, but not a request constraint tightened (a `maxLength` lowered, a `pattern` added)
// nor a response type widened (a value that may now be null). No maintained npm tool had these rules for OpenAPI 3.1
// (oasdiff is a Go binary). What Optic reports at or around a path is not reported again (breaking.ts).
//
// Request side (parameters and bodies), breaking when the head accepts less: maxLength/maxItems/maxProperties/
// maximum/exclusiveMaximum lowered or added; minLength/minItems/minProperties/minimum/exclusiveMinimum raised or added;
// a pattern, format or const added or changed (not `int32` where the base's bounds already lie within it); an enum
// added where there was none; types narrowed;
// additionalProperties closed; a body newly required.
// Response side, breaking when the head promises less: a type widened (null included); a property added to an object
// declared closed (additionalProperties: false). (Optic: a property no longer
// required; enum values added, which is decided breaking: a generated client switching over the values meets one it
// does not know; add a new field instead, or version the API.)
// A required property no longer required in an answer, or made required in a request, on every property (Optic
// misses those whose schema is an `anyOf`).
// oneOf/anyOf/allOf alternatives are compared pair by pair (as properties are): matched by the value of the property
// that tells them apart (a `const`, as a discriminator's), else an equal alternative (a reordering is no change), else
// by position or likeness. An alternative added to an answer's oneOf/anyOf, or removed from either, is breaking.
// Schemas behind a $ref cycle are compared once, at their first expansion.

export interface ConstraintChange {
  message: string;
  /** JSON pointer into the head document's operation. */
  path: string;
}

type Schema = Record<string, unknown>;
type Doc = { paths?: Record<string, Record<string, unknown>> };

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
/** Request-side bounds: keyword → true when a lower value accepts less. */
const UPPER_BOUNDS = ['maxLength', 'maxItems', 'maxProperties', 'maximum', 'exclusiveMaximum'];
const LOWER_BOUNDS = ['minLength', 'minItems', 'minProperties', 'minimum', 'exclusiveMinimum'];

const pointer = (...tokens: string[]) => tokens.map((token) => `/${token.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);
/** The schema's types; undefined means any. */
const typesOf = (schema: Schema): Set<string> | undefined =>
  schema.type === undefined ? undefined : new Set(Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string]);
const show = (value: unknown) => JSON.stringify(value);

/** Integer formats by the range they accept (OpenAPI's format registry). Only int32: generators map an integer
 * without a format to a 32-bit type, so adding `int64` changes generated code (Java `Integer` → `Long`) even when no
 * request is refused. */
const INTEGER_RANGES: Record<string, [number, number]> = { int32: [-(2 ** 31), 2 ** 31 - 1] };

/** An integer format whose range the base's own bounds already lie within, and that generated types already
 * assumed: adding it refuses no request and changes no client (e.g. `format: int32` on an id bounded 1–2147483647). */
function formatImpliedByBounds(base: Schema, format: unknown): boolean {
  const range = typeof format === 'string' ? INTEGER_RANGES[format] : undefined;
  const types = typesOf(base);
  if (!range || !types || [...types].some((type) => type !== 'integer' && type !== 'null')) return false;
  const low = typeof base.minimum === 'number' ? base.minimum : typeof base.exclusiveMinimum === 'number' ? base.exclusiveMinimum + 1 : undefined;
  const high = typeof base.maximum === 'number' ? base.maximum : typeof base.exclusiveMaximum === 'number' ? base.exclusiveMaximum - 1 : undefined;
  return low !== undefined && high !== undefined && low >= range[0] && high <= range[1];
}

function compareRequest(base: Schema, head: Schema, at: string, out: ConstraintChange[], depth = 0): void {
  if (depth > 32 || typeof base.$ref === 'string' || typeof head.$ref === 'string') return;
  for (const keyword of UPPER_BOUNDS) {
    const [from, to] = [base[keyword], head[keyword]];
    if (typeof to === 'number' && (typeof from !== 'number' || to < from))
      out.push({ path: at, message: `request ${keyword} tightened from ${from ?? 'none'} to ${to}` });
  }
  for (const keyword of LOWER_BOUNDS) {
    const [from, to] = [base[keyword], head[keyword]];
    if (typeof to === 'number' && (typeof from !== 'number' || to > from))
      out.push({ path: at, message: `request ${keyword} tightened from ${from ?? 'none'} to ${to}` });
  }
  for (const keyword of ['pattern', 'format', 'const']) {
    if (keyword === 'format' && base.format === undefined && formatImpliedByBounds(base, head.format)) continue;
    if (head[keyword] !== undefined && show(head[keyword]) !== show(base[keyword])) {
      out.push({ path: at, message: `request ${keyword} ${base[keyword] === undefined ? 'added' : 'changed'}: ${show(head[keyword])}` });
    }
  }
  if (Array.isArray(head.enum) && !Array.isArray(base.enum))
    out.push({ path: at, message: `request values limited to ${(head.enum as unknown[]).map(show).join(', ')}` });
  const [baseTypes, headTypes] = [typesOf(base), typesOf(head)];
  if (headTypes) {
    const dropped = baseTypes
      ? [...baseTypes].filter((type) => !headTypes.has(type) && !(type === 'integer' && headTypes.has('number')))
      : ['(any type)'];
    if (dropped.length > 0) out.push({ path: at, message: `request type no longer accepts ${dropped.join(', ')}` });
  }
  if (head.additionalProperties === false && base.additionalProperties !== false)
    out.push({ path: at, message: 'request object closed to additional properties' });
  // A property the request may omit that it now must send (Optic reports it for plain properties, not for those whose
  // schema is an `anyOf` or a private one; reported here for all, and deduplicated in breaking.ts).
  if (isSchema(head.properties)) {
    const baseRequired = new Set(requiredOf(base));
    for (const name of requiredOf(head)) {
      if (!baseRequired.has(name) && name in head.properties)
        out.push({ path: `${at}${pointer('properties', name)}`, message: `request property '${name}' made required` });
    }
  }
  compareChildren(base, head, at, out, depth, compareRequest);
}

const requiredOf = (schema: Schema): string[] =>
  Array.isArray(schema.required) ? (schema.required as unknown[]).filter((n): n is string => typeof n === 'string') : [];

function compareResponse(base: Schema, head: Schema, at: string, out: ConstraintChange[], depth = 0): void {
  if (depth > 32 || typeof base.$ref === 'string' || typeof head.$ref === 'string') return;
  const [baseTypes, headTypes] = [typesOf(base), typesOf(head)];
  if (baseTypes) {
    const added = headTypes ? [...headTypes].filter((type) => !baseTypes.has(type)) : ['(any type)'];
    if (added.length > 0) out.push({ path: at, message: `response may now be ${added.join(', ')}` });
  }
  // A closed object promised no other property: clients that validate answers (or generated models that refuse
  // unknown fields) meet one they were told could not come.
  if (base.additionalProperties === false && isSchema(base.properties) && isSchema(head.properties)) {
    const baseProperties = base.properties;
    const added = Object.keys(head.properties).filter((name) => !(name in baseProperties));
    if (added.length > 0) out.push({ path: at, message: `response object closed to additional properties now has ${added.join(', ')}` });
  }
  // A property every answer carried that may now be missing (issue 41: Optic lets it through when the property's
  // schema is an `anyOf`, e.g. User.email, so the rule is ours for every property).
  if (isSchema(head.properties)) {
    const headRequired = new Set(requiredOf(head));
    for (const name of requiredOf(base)) {
      if (!headRequired.has(name) && name in head.properties)
        out.push({ path: `${at}${pointer('properties', name)}`, message: `response property '${name}' no longer required: answers may lack it` });
    }
  }
  compareChildren(base, head, at, out, depth, compareResponse);
}

function compareChildren(base: Schema, head: Schema, at: string, out: ConstraintChange[], depth: number, compare: typeof compareRequest): void {
  const [baseProperties, headProperties] = [base.properties, head.properties];
  if (isSchema(baseProperties) && isSchema(headProperties)) {
    for (const [name, headProperty] of Object.entries(headProperties)) {
      const baseProperty = baseProperties[name];
      if (isSchema(baseProperty) && isSchema(headProperty))
        compare(baseProperty, headProperty, `${at}${pointer('properties', name)}`, out, depth + 1);
    }
  }
  if (isSchema(base.items) && isSchema(head.items)) compare(base.items, head.items, `${at}/items`, out, depth + 1);
  if (isSchema(base.additionalProperties) && isSchema(head.additionalProperties))
    compare(base.additionalProperties, head.additionalProperties, `${at}/additionalProperties`, out, depth + 1);
  const request = compare === compareRequest;
  for (const keyword of ['oneOf', 'anyOf', 'allOf']) {
    const [from, to] = [base[keyword], head[keyword]];
    if (!Array.isArray(from) || !Array.isArray(to)) continue;
    const { pairs, added, removed } = pairedAlternatives(from, to);
    for (const [index, before, after] of pairs) compare(before, after, `${at}/${keyword}/${index}`, out, depth + 1);
    if (keyword === 'allOf') continue;
    // A client decoding a closed union of answers meets a shape it cannot decode (oasdiff rates it breaking too); a
    // request shape the server stops accepting refuses requests that were valid. An answer's alternative removed is
    // breaking as a GraphQL union member removed is (graphql-inspector, and Optic here): code written for that shape
    // is dead, a generated client's type changes. Only an alternative added to a request is safe.
    if (!request)
      for (const index of added)
        out.push({ path: `${at}/${keyword}/${index}`, message: `response ${keyword} alternative added: ${summary(to[index])}` });
    for (const index of removed)
      out.push({
        path: `${at}/${keyword}/${index}`,
        message: `${request ? 'request' : 'response'} ${keyword} alternative removed: ${summary(from[index])}`,
      });
  }
}

/** An alternative in a few words, for a message: its key, else its title, type and property names. */
function summary(schema: unknown): string {
  if (!isSchema(schema)) return show(schema);
  const key = alternativeKey(schema);
  if (key) return key;
  if (typeof schema.title === 'string') return schema.title;
  const properties = isSchema(schema.properties) ? ` {${Object.keys(schema.properties).join(', ')}}` : '';
  return `${schema.const !== undefined ? `const ${show(schema.const)}` : show(schema.type ?? 'any')}${properties}`;
}

/** What tells an alternative apart: its properties fixed to one value (`const`, or a one-value enum), all of them. */
function alternativeKey(schema: unknown): string | undefined {
  if (!isSchema(schema) || !isSchema(schema.properties)) return undefined;
  const fixed = Object.entries(schema.properties).flatMap(([name, property]) => {
    if (!isSchema(property)) return [];
    if (property.const !== undefined) return [`${name}=${show(property.const)}`];
    return Array.isArray(property.enum) && property.enum.length === 1 ? [`${name}=${show(property.enum[0])}`] : [];
  });
  return fixed.length > 0 ? fixed.sort().join(',') : undefined;
}

/** JSON with sorted keys: equal alternatives compare equal whatever their keys' order. */
const canonical = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(canonical).join(',')}]`
    : isSchema(value)
      ? `{${Object.keys(value)
          .sort()
          .map((key) => `${show(key)}:${canonical(value[key])}`)
          .join(',')}}`
      : show(value);

/** How much two alternatives look alike (to pair those without a key): same types, then shared property names. */
function likeness(a: Schema, b: Schema): number {
  const names = (schema: Schema) => new Set(isSchema(schema.properties) ? Object.keys(schema.properties) : []);
  const [left, right] = [names(a), names(b)];
  const shared = [...left].filter((name) => right.has(name)).length;
  return (show(a.type) === show(b.type) ? 1 : 0) + shared / Math.max(1, left.size, right.size);
}

/**
 * The head's alternatives with the base's they continue, as [head index, base, head], and the indexes of those added
 * (head) and removed (base). Paired by key (the properties fixed to one value) when every alternative of both lists has
 * a distinct one; else an alternative equal to one of the base continues it (so a reordering changes nothing), and the
 * rest pair by position when as many remain on both sides, else by likeness; what finds no partner was added or removed.
 */
function pairedAlternatives(base: unknown[], head: unknown[]): { pairs: [number, Schema, Schema][]; added: number[]; removed: number[] } {
  const baseKeys = base.map(alternativeKey);
  const headKeys = head.map(alternativeKey);
  const unique = (keys: (string | undefined)[]) => keys.every((key) => key !== undefined) && new Set(keys).size === keys.length;
  const partner = new Map<number, number>(); // head index → base index
  if (unique(baseKeys) && unique(headKeys)) {
    headKeys.forEach((key, index) => {
      const before = baseKeys.indexOf(key);
      if (before >= 0) partner.set(index, before);
    });
  } else {
    const taken = new Set<number>();
    const baseForms = base.map(canonical);
    head.forEach((after, index) => {
      const before = baseForms.findIndex((form, at) => !taken.has(at) && form === canonical(after));
      if (before < 0) return;
      partner.set(index, before);
      taken.add(before);
    });
    const restHead = head.map((_, index) => index).filter((index) => !partner.has(index));
    const restBase = base.map((_, index) => index).filter((index) => !taken.has(index));
    if (restHead.length === restBase.length) restHead.forEach((index, at) => partner.set(index, restBase[at] as number));
    else {
      const candidates = restHead
        .flatMap((h) => restBase.map((b) => [h, b, isSchema(head[h]) && isSchema(base[b]) ? likeness(base[b], head[h]) : 0] as const))
        .filter(([, , score]) => score > 0)
        .sort((x, y) => y[2] - x[2]);
      for (const [h, b] of candidates) {
        if (partner.has(h) || taken.has(b)) continue;
        partner.set(h, b);
        taken.add(b);
      }
    }
  }
  const pairs: [number, Schema, Schema][] = [];
  for (const [index, before] of partner) {
    const [from, to] = [base[before], head[index]];
    if (isSchema(from) && isSchema(to)) pairs.push([index, from, to]);
  }
  const paired = new Set(partner.values());
  return {
    pairs: pairs.sort((a, b) => a[0] - b[0]),
    added: head.map((_, index) => index).filter((index) => !partner.has(index)),
    removed: base.map((_, index) => index).filter((index) => !paired.has(index)),
  };
}

type Parameter = { name: string; in: string; schema?: Schema };

/** The operation's parameters with its path item's, by `in:name` (an operation's own one wins). */
function parametersOf(pathItem: Record<string, unknown>, operation: Record<string, unknown>): Map<string, Parameter> {
  const all = [...((pathItem.parameters as Parameter[] | undefined) ?? []), ...((operation.parameters as Parameter[] | undefined) ?? [])];
  return new Map(all.filter((parameter) => typeof parameter?.name === 'string').map((parameter) => [`${parameter.in}:${parameter.name}`, parameter]));
}

type Content = Record<string, { schema?: Schema }> | undefined;

/** Constraint changes between two inlined OpenAPI documents, per operation present in both. */
export function constraintChanges(base: Doc, head: Doc): ConstraintChange[] {
  const out: ConstraintChange[] = [];
  for (const [route, headItem] of Object.entries(head.paths ?? {})) {
    const baseItem = base.paths?.[route];
    if (!baseItem) continue;
    for (const method of METHODS) {
      const [baseOperation, headOperation] = [baseItem[method], headItem[method]];
      if (!isSchema(baseOperation) || !isSchema(headOperation)) continue;
      const at = pointer('paths', route, method);

      const baseParameters = parametersOf(baseItem, baseOperation);
      for (const [key, parameter] of parametersOf(headItem, headOperation)) {
        const before = baseParameters.get(key);
        const where = `${at}/parameters/${key}`;
        if (before && isSchema(before.schema) && isSchema(parameter.schema)) compareRequest(before.schema, parameter.schema, `${where}/schema`, out);
      }

      const [baseBody, headBody] = [baseOperation.requestBody as Schema | undefined, headOperation.requestBody as Schema | undefined];
      if (headBody?.required && baseBody && !baseBody.required) out.push({ path: `${at}/requestBody`, message: 'request body made required' });
      for (const [mediaType, media] of Object.entries((headBody?.content as Content) ?? {})) {
        const before = (baseBody?.content as Content)?.[mediaType];
        if (isSchema(before?.schema) && isSchema(media.schema))
          compareRequest(before.schema, media.schema, `${at}${pointer('requestBody', 'content', mediaType, 'schema')}`, out);
      }

      const [baseResponses, headResponses] = [
        baseOperation.responses as Record<string, Schema> | undefined,
        headOperation.responses as Record<string, Schema> | undefined,
      ];
      for (const [status, response] of Object.entries(headResponses ?? {})) {
        for (const [mediaType, media] of Object.entries((response.content as Content) ?? {})) {
          const before = (baseResponses?.[status]?.content as Content)?.[mediaType];
          if (isSchema(before?.schema) && isSchema(media.schema))
            compareResponse(before.schema, media.schema, `${at}${pointer('responses', status, 'content', mediaType, 'schema')}`, out);
        }
      }
    }
  }
  return out;
}
