// Arbitrary REST requests for one contract operation: path parameters, query strings, bodies, content types, callers.
import fc from 'fast-check';
import { encode, RAW_URL_PIECES } from './encoding.js';
import { mutated, nastyString, poison, valid } from './json-schema.js';
import { resolve, type FuzzOperation, type Parameter } from './operations.js';

export type Caller = 'anonymous' | 'user' | 'admin' | 'garbage';

export type Body =
  { kind: 'none' } | { kind: 'json'; value: unknown; contentType: string } | { kind: 'raw'; text: string; contentType: string | undefined };

export interface RestRequest {
  operation: FuzzOperation;
  method: string;
  /** Raw (decoded) path parameter values, by name; the guard reads and may replace them. */
  pathValues: Record<string, { raw: string; encoded: string }>;
  /** How the version is given: the canonical `/api/v1` prefix, or the alternatives of SPEC §4. */
  version: { prefix: string; query: string[]; accept: string | undefined; supported: boolean };
  /** Query pairs, already encoded (or deliberately mis-encoded). */
  query: [string, string][];
  body: Body;
  caller: Caller;
}

/** Known row ids by the collection segment that precedes a path parameter (`users`, `posts`, `orders`, ...). */
export type IdPools = Record<string, number[]>;

const numberLike = fc.constantFrom(
  '0',
  '-1',
  '2147483647',
  '2147483648',
  '-2147483649',
  '9007199254740993',
  '99999999999999999999999',
  '1e3',
  '1e400',
  '-1e400',
  '1E+400',
  '1e-400',
  '0x10',
  '1.5',
  '1.0',
  '01',
  '+1',
  ' 1',
  '1 ',
  'NaN',
  'Infinity',
  '-Infinity',
  '-0',
  '１',
  'true',
  'null',
);

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * Cursors as an attacker forges them: the real shape (`f` sort field, `d` direction, `v` value, `id`, `s` fingerprint)
 * with values of the wrong type for the sort field, ids beyond int4, foreign or missing fingerprints, other shapes.
 */
export const forgedCursor = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc
      .record({
        f: fc.constantFrom('id', 'name', 'email', 'age', 'createdAt', 'title', 'totalCents', 'status', '__proto__'),
        d: fc.constantFrom('asc', 'desc', 'up'),
        v: fc.oneof(
          fc.constantFrom(null, 'not a date', '2026-01-01T00:00:00.000Z', 'KING', 'paid', '', 1e300, -1e300, 2_147_483_648, 1.5, -0, true, [1], {
            gt: 1,
          }),
          fc.string({ maxLength: 10 }).chain((text) => poison().map((bad) => `${text}${bad}`)),
          fc.integer(),
        ),
        id: fc.constantFrom<unknown>(1, 0, -1, 2_147_483_648, 1e300, '1', null, 1.5),
        s: fc.option(fc.string({ maxLength: 16 }), { nil: undefined }),
      })
      .map(base64url),
    fc.constantFrom<unknown>([], [1, 2], null, 'x', 1, { f: 'id' }).map(base64url),
  );

/** The collection a path parameter points into: the segment before it (`/users/{id}` → users, `{postId}` → posts). */
function poolOf(operation: FuzzOperation, parameter: Parameter): string {
  const segments = operation.path.split('/');
  const index = segments.indexOf(`{${parameter.name}}`);
  return segments[index - 1] ?? '';
}

function pathValue(operation: FuzzOperation, parameter: Parameter, pools: IdPools): fc.Arbitrary<{ raw: string; encoded: string }> {
  const pool = pools[poolOf(operation, parameter)] ?? [];
  const decoded = fc.oneof(
    { weight: pool.length > 0 ? 6 : 0, arbitrary: pool.length > 0 ? fc.constantFrom(...pool).map(String) : fc.constant('1') },
    { weight: 2, arbitrary: valid(parameter.schema, resolve).map(String) },
    { weight: 2, arbitrary: numberLike },
    { weight: 1, arbitrary: fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String) },
    { weight: 2, arbitrary: nastyString() },
    { weight: 1, arbitrary: fc.integer({ min: 90, max: 400 }).map((length) => '9'.repeat(length)) },
  );
  return fc.oneof(
    { weight: 9, arbitrary: decoded.map((raw) => ({ raw, encoded: encode(raw) })) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_URL_PIECES).map((piece) => ({ raw: piece, encoded: piece })) },
  );
}

/** A value for a declared query parameter: valid for its schema, or one of the usual wrong ones. */
function queryValue(parameter: Parameter): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: valid(parameter.schema, resolve).map(String) },
    { weight: 2, arbitrary: numberLike },
    { weight: 2, arbitrary: nastyString() },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        'id,desc',
        '-id',
        'id,sideways',
        'name,email,nope',
        'ADMIN',
        'KING',
        'eyJpZCI6MX0',
        'eyJpZCI6Ii0xIn0',
        'not-a-cursor',
        'x'.repeat(5000),
      ),
    },
    // the classes issue 10 found past the fuzz: forged cursors, and valid-looking values with a NUL inside
    { weight: parameter.name === 'cursor' ? 4 : 0, arbitrary: forgedCursor() },
    { weight: 1, arbitrary: valid(parameter.schema, resolve).chain((value) => poison().map((bad) => `${String(value)}${bad}`)) },
  );
}

const encodedPair = (key: fc.Arbitrary<string>, value: fc.Arbitrary<string>): fc.Arbitrary<[string, string]> =>
  fc.tuple(
    fc.oneof({ weight: 9, arbitrary: key.map(encode) }, { weight: 1, arbitrary: fc.constantFrom(...RAW_URL_PIECES) }),
    fc.oneof({ weight: 9, arbitrary: value.map(encode) }, { weight: 1, arbitrary: fc.constantFrom(...RAW_URL_PIECES) }),
  );

/** Names a server treats specially although the operation does not declare them: credentials, versions, prototype keys. */
const specialKeys = fc.constantFrom(
  'version',
  'api_key',
  'timestamp',
  'nonce',
  'signature',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'all',
  'session',
);

function queryPairs(operation: FuzzOperation): fc.Arbitrary<[string, string][]> {
  const declared = operation.queryParameters.map((parameter) =>
    fc.option(encodedPair(fc.constant(parameter.name), queryValue(parameter)), { freq: parameter.required ? 8 : 2, nil: undefined }),
  );
  const unknown = fc.array(encodedPair(fc.oneof(specialKeys, fc.string({ maxLength: 12 })), fc.oneof(nastyString(), numberLike)), { maxLength: 3 });
  return fc.tuple(fc.tuple(...declared), unknown, fc.boolean(), fc.nat()).map(([chosen, extra, repeat, pick]) => {
    const pairs = [...chosen.filter((pair): pair is [string, string] => pair !== undefined), ...extra];
    // A repeated parameter: the same name again (Fastify then hands the handler an array).
    if (repeat && pairs.length > 0) {
      const [key] = pairs[pick % pairs.length]!;
      pairs.push([key, encode(String(pick))]);
    }
    return pairs;
  });
}

const jsonContentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/json; charset=latin1',
      'application/merge-patch+json',
      'application/vnd.api.v1+json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
      'application/json;;',
      '',
    ),
  },
);

const rawText = (validJson: fc.Arbitrary<string>) =>
  fc.oneof(
    nastyString(),
    validJson.chain((text) => fc.nat({ max: Math.max(0, text.length - 1) }).map((cut) => text.slice(0, cut))),
    fc.constantFrom(
      '{',
      '[',
      '{"a":',
      '{"a":1,}',
      "{'a':1}",
      '\uFEFF{}',
      '{"name":"a","name":1}',
      '{"__proto__":{"isAdmin":true}}',
      '{"constructor":{"prototype":{"x":1}}}',
      'null',
      '"text"',
      '1e999',
      'NaN',
      '['.repeat(100_000),
    ),
    // valid JSON whose first number is written beyond any range (a JS value cannot hold it, so only raw text sends it)
    validJson.chain((text) =>
      fc
        .constantFrom('1e400', '-1e400', '99999999999999999999', '1E+308', '-0', '0.1e1')
        .map((number) => text.replace(/(?<=:)-?\d+(\.\d+)?/, number)),
    ),
    // valid JSON with an escaped NUL or lone surrogate in its first string (JSON.stringify of a JS string escapes them too,
    // but this reaches parsers that handle escapes themselves)
    validJson.chain((text) => fc.constantFrom('\\u0000', '\\ud800', '\\udfff').map((escape) => text.replace(/(?<=:")/, escape))),
  );

function body(operation: FuzzOperation, method: string): fc.Arbitrary<Body> {
  if (method === 'GET' || method === 'HEAD') return fc.constant({ kind: 'none' });
  const schema = operation.body;
  const validJson = schema ? valid(schema, resolve).map((value) => JSON.stringify(value)) : fc.constant('{}');
  const raw = fc.record({ kind: fc.constant('raw' as const), text: rawText(validJson), contentType: fc.option(jsonContentType, { nil: undefined }) });
  if (!schema) {
    return fc.oneof(
      { weight: 4, arbitrary: fc.constant({ kind: 'none' as const }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('json' as const), value: fc.jsonValue({ maxDepth: 3 }), contentType: jsonContentType }) },
      { weight: 1, arbitrary: raw },
    );
  }
  return fc.oneof(
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('json' as const), value: valid(schema, resolve), contentType: jsonContentType }) },
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('json' as const), value: mutated(schema, resolve), contentType: jsonContentType }) },
    { weight: 1, arbitrary: raw },
    { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
  );
}

/** The version alternatives of SPEC §4 (only for `/api/v1` paths), mostly the canonical one. */
function version(operation: FuzzOperation): fc.Arbitrary<RestRequest['version']> {
  const canonical: RestRequest['version'] = { prefix: '/api/v1', query: [], accept: undefined, supported: true };
  if (!operation.path.startsWith('/api/v1/')) return fc.constant({ prefix: '', query: [], accept: undefined, supported: true });
  return fc.oneof(
    { weight: 8, arbitrary: fc.constant(canonical) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<RestRequest['version']>(
        { ...canonical, prefix: '/api' },
        { ...canonical, prefix: '/api', query: ['version=1'] },
        { ...canonical, prefix: '/api', accept: 'application/vnd.api.v1+json' },
      ),
    },
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.constantFrom('/api/v2', '/api/v0', '/api/v', '/API/v1').map((prefix) => ({ ...canonical, prefix, supported: false })),
        nastyString().map((value) => ({ ...canonical, prefix: '/api', query: [`version=${encode(value)}`], supported: false })),
        fc
          .constantFrom('9', '', 'x', '1.0')
          .map((value) => ({ ...canonical, prefix: '/api', accept: `application/vnd.api.v${value}+json`, supported: false })),
      ),
    },
  );
}

const OTHER_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];

export function restRequest(operation: FuzzOperation, pools: IdPools): fc.Arbitrary<RestRequest> {
  const method = fc.oneof({ weight: 9, arbitrary: fc.constant(operation.method) }, { weight: 1, arbitrary: fc.constantFrom(...OTHER_METHODS) });
  const pathValues = fc.record(
    Object.fromEntries(operation.pathParameters.map((parameter) => [parameter.name, pathValue(operation, parameter, pools)])),
  );
  return method.chain((chosen) =>
    fc.record({
      operation: fc.constant(operation),
      method: fc.constant(chosen),
      pathValues,
      version: version(operation),
      query: queryPairs(operation),
      body: body(operation, chosen),
      caller: fc.constantFrom<Caller>('anonymous', 'user', 'admin', 'user', 'admin', 'garbage'),
    }),
  );
}

/** Whether the request reaches the operation's route, so the operation's declared responses apply. */
export function reachesOperation(request: RestRequest): boolean {
  const segmentsOk = Object.values(request.pathValues).every(
    ({ encoded }) => encoded !== '' && encoded !== '.' && encoded !== '..' && !/%2F|%5C/i.test(encoded),
  );
  return request.method === request.operation.method && request.version.supported && segmentsOk;
}

/** The URL path and query string, as sent. */
export function target(request: RestRequest): string {
  let path = request.operation.path;
  for (const [name, { encoded }] of Object.entries(request.pathValues)) path = path.replace(`{${name}}`, encoded);
  if (request.version.prefix !== '' && request.version.prefix !== '/api/v1') path = request.version.prefix + path.slice('/api/v1'.length);
  const query = [...request.version.query, ...request.query.map(([key, value]) => `${key}=${value}`)].join('&');
  return query === '' ? path : `${path}?${query}`;
}
