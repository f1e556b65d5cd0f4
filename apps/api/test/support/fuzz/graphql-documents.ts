// Arbitrary GraphQL documents from schema/schema.graphql: random selections with random (often wrong) arguments, plus garbage.
import fc from 'fast-check';
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
} from 'graphql';
import { readFileSync } from 'node:fs';
import { graphqlSchemaPath } from '../../../src/paths.js';
import { wellFormed } from './encoding.js';
import { nastyString } from './json-schema.js';

export const schema = buildSchema(readFileSync(graphqlSchemaPath, 'utf8'));

/** Known ids by GraphQL type name (`User`, `Post`), and `deletable` users: the only ones `deleteUser` is given. */
export type GraphQLIdPools = { User: number[]; Post: number[]; deletable: number[] };

export interface Document {
  text: string;
  variables: Record<string, unknown>;
}

const stringLiteral = nastyString().map((text) => JSON.stringify(wellFormed(text)));

/** A literal of any kind, for arguments given the wrong type. */
const anyLiteral: fc.Arbitrary<string> = fc.oneof(
  fc.integer().map(String),
  fc.constantFrom(
    '2147483648',
    '-2147483649',
    '1.5',
    '1e400',
    'true',
    'null',
    'ADMIN',
    'KING',
    '[]',
    '{}',
    '[1, "a", null]',
    '{a: 1}',
    '$undefinedVariable',
    '""""""',
  ),
  stringLiteral,
);

function idLiteral(pool: number[]): fc.Arbitrary<string> {
  const known = pool.length > 0 ? fc.constantFrom(...pool) : fc.constant(1);
  return fc.oneof(
    { weight: 5, arbitrary: known.map((id) => JSON.stringify(String(id))) },
    { weight: 2, arbitrary: known.map(String) },
    {
      weight: 2,
      arbitrary: fc.constantFrom('"abc"', '"-1"', '"0"', '"1.5"', '"99999999999999999999"', '"2147483648"', '""', '" 1"', '"0x10"', '"1e3"'),
    },
    { weight: 1, arbitrary: stringLiteral },
  );
}

/** A literal for `type`: mostly valid, sometimes of the wrong type. */
function inputLiteral(type: GraphQLInputType, ids: number[]): fc.Arbitrary<string> {
  const wrong = { weight: 1, arbitrary: anyLiteral };
  if (isNonNullType(type)) return inputLiteral(type.ofType, ids);
  if (isListType(type)) return fc.array(inputLiteral(type.ofType, ids), { maxLength: 3 }).map((items) => `[${items.join(', ')}]`);
  if (isEnumType(type)) return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...type.getValues().map((value) => value.name)) }, wrong);
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    const entries = fields.map((field) =>
      fc.option(
        inputLiteral(field.type, ids).map((value) => `${field.name}: ${value}`),
        { freq: isNonNullType(field.type) ? 10 : 2, nil: undefined },
      ),
    );
    const extra = fc.option(
      anyLiteral.map((value) => `unknownField: ${value}`),
      { freq: 6, nil: undefined },
    );
    return fc.oneof(
      { weight: 4, arbitrary: fc.tuple(fc.tuple(...entries), extra).map(([chosen, more]) => `{${[...chosen, more].filter(Boolean).join(', ')}}`) },
      wrong,
    );
  }
  switch (type.name) {
    case 'Int':
      return fc.oneof({ weight: 4, arbitrary: fc.oneof(fc.integer({ min: -5, max: 120 }), fc.integer()).map(String) }, wrong);
    case 'ID':
      return fc.oneof({ weight: 4, arbitrary: idLiteral(ids) }, wrong);
    case 'Boolean':
      return fc.oneof({ weight: 4, arbitrary: fc.boolean().map(String) }, wrong);
    default:
      return fc.oneof(
        { weight: 4, arbitrary: stringLiteral },
        { weight: 1, arbitrary: fc.string({ maxLength: 3000 }).map((text) => `"""${wellFormed(text).replace(/"""/g, '')}"""`) },
        wrong,
      );
  }
}

/** A JSON value for a variable of `type`: mostly fitting, sometimes anything. */
function variableValue(type: GraphQLInputType, ids: number[]): fc.Arbitrary<unknown> {
  const anything = { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) };
  if (isNonNullType(type)) return variableValue(type.ofType, ids);
  if (isListType(type)) return fc.array(variableValue(type.ofType, ids), { maxLength: 3 });
  if (isEnumType(type)) return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...type.getValues().map((value) => value.name)) }, anything);
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    const record = fc.record(Object.fromEntries(fields.map((field) => [field.name, variableValue(field.type, ids)])), {
      requiredKeys: fields.filter((field) => isNonNullType(field.type)).map((field) => field.name),
    });
    return fc.oneof({ weight: 4, arbitrary: record }, anything);
  }
  switch (type.name) {
    case 'Int':
      return fc.oneof({ weight: 4, arbitrary: fc.integer({ min: -5, max: 120 }) }, fc.constantFrom(2_147_483_648, 1.5, -0), anything);
    case 'ID':
      return fc.oneof({ weight: 4, arbitrary: (ids.length > 0 ? fc.constantFrom(...ids) : fc.constant(1)).map(String) }, anything);
    default:
      return fc.oneof({ weight: 4, arbitrary: nastyString() }, anything);
  }
}

/** Which pool of known ids an argument draws from: by the field's result type (`deleteUser` only from deletable users). */
function idsFor(field: GraphQLField<unknown, unknown>, pools: GraphQLIdPools): number[] {
  if (field.name === 'deleteUser') return pools.deletable;
  const named = getNamedType(field.type).name;
  if (named === 'Post' || field.name === 'createPost') return pools.Post;
  return pools.User;
}

interface Piece {
  text: string;
  variables: { name: string; type: string; value: unknown }[];
}

let variableCounter = 0;

/** `name: value` for each argument (required ones almost always), some as `$variables`, sometimes an unknown one. */
function argumentsOf(field: GraphQLField<unknown, unknown>, pools: GraphQLIdPools): fc.Arbitrary<Piece> {
  const ids = idsFor(field, pools);
  const each = field.args.map((arg) =>
    fc.option(
      fc.oneof(
        { weight: 3, arbitrary: inputLiteral(arg.type, ids).map((value): Piece => ({ text: `${arg.name}: ${value}`, variables: [] })) },
        {
          weight: 1,
          arbitrary: fc
            .tuple(
              variableValue(arg.type, ids),
              fc.oneof(
                { weight: 4, arbitrary: fc.constant(String(arg.type)) },
                { weight: 1, arbitrary: fc.constantFrom('String', 'Int!', '[ID]', 'Boolean', 'Role') },
              ),
            )
            .map(([value, type]): Piece => {
              const name = `v${variableCounter++}`;
              return { text: `${arg.name}: $${name}`, variables: [{ name, type, value }] };
            }),
        },
      ),
      { freq: isNonNullType(arg.type) ? 12 : 2, nil: undefined },
    ),
  );
  const unknown = fc.option(
    anyLiteral.map((value): Piece => ({ text: `bogus: ${value}`, variables: [] })),
    { freq: 12, nil: undefined },
  );
  return fc.tuple(fc.tuple(...each), unknown).map(([chosen, extra]) => {
    const pieces = [...chosen, extra].filter((piece): piece is Piece => piece !== undefined);
    return {
      text: pieces.length === 0 ? '' : `(${pieces.map((piece) => piece.text).join(', ')})`,
      variables: pieces.flatMap((piece) => piece.variables),
    };
  });
}

const alias = fc.option(fc.constantFrom('a', 'b', 'x1', '_', 'alias'), { freq: 5, nil: undefined });

/** A selection set over `type`: 1–4 of its fields (leaves only at the last level), each with arguments and sub-selections. */
function selectionSet(type: GraphQLObjectType, depth: number, pools: GraphQLIdPools): fc.Arbitrary<Piece> {
  const fields = Object.values(type.getFields()).filter((field) => depth > 0 || isLeafType(getNamedType(field.type)));
  const selections = fields.map((field) => {
    const named = getNamedType(field.type);
    const sub = isObjectType(named) ? selectionSet(named, depth - 1, pools) : fc.constant<Piece>({ text: '', variables: [] });
    return fc.tuple(alias, argumentsOf(field, pools), sub).map(([name, args, inner]): Piece => ({
      text: `${name ? `${name}: ` : ''}${field.name}${args.text}${inner.text ? ` ${inner.text}` : ''}`,
      variables: [...args.variables, ...inner.variables],
    }));
  });
  return fc
    .tuple(
      fc.subarray(
        selections.map((_, index) => index),
        { minLength: 1, maxLength: Math.min(4, selections.length) },
      ),
      fc.boolean(),
    )
    .chain(([indexes, typename]) => fc.tuple(...indexes.map((index) => selections[index]!)).map((chosen) => ({ chosen, typename })))
    .map(({ chosen, typename }) => ({
      text: `{ ${[...chosen.map((piece) => piece.text), ...(typename ? ['__typename'] : [])].join(' ')} }`,
      variables: chosen.flatMap((piece) => piece.variables),
    }));
}

/** A query or mutation built from the schema, with its variables (declared with the argument's type, or a wrong one). */
export function schemaDocument(pools: GraphQLIdPools): fc.Arbitrary<Document> {
  const operation = (kind: 'query' | 'mutation', root: GraphQLObjectType) =>
    selectionSet(root, 4, pools).map((piece) => {
      const declared = piece.variables.map((variable) => `$${variable.name}: ${variable.type}`).join(', ');
      return {
        text: `${kind}${declared ? ` Fuzz(${declared})` : ''} ${piece.text}`,
        variables: Object.fromEntries(piece.variables.map((variable) => [variable.name, variable.value])),
      };
    });
  return fc.oneof(
    { weight: 3, arbitrary: operation('query', schema.getQueryType()!) },
    { weight: 2, arbitrary: operation('mutation', schema.getMutationType()!) },
  );
}

const repeat = (count: number, make: (index: number) => string) => Array.from({ length: count }, (_, index) => make(index)).join(' ');

function nested(depth: number): string {
  let inner = 'id';
  for (let level = 0; level < depth; level++) inner = level % 2 === 0 ? `posts { ${inner} }` : `author { ${inner} }`;
  return `{ users { ${inner} } }`;
}

/** Documents no client should send: random text, cut-off documents, and every abuse limit exceeded. */
export function garbageDocument(pools: GraphQLIdPools): fc.Arbitrary<Document> {
  const plain = (text: fc.Arbitrary<string>) => text.map((value) => ({ text: value, variables: {} }));
  return fc.oneof(
    plain(
      fc.oneof(
        fc.string(),
        fc.string({ unit: 'binary', maxLength: 200 }),
        fc.constantFrom(
          '',
          '{',
          '}',
          '{ }',
          'query',
          'mutation {',
          '{ __typename',
          'subscription { postCreated { id } }',
          '{ __schema { types { name fields { name type { name ofType { name ofType { name ofType { name } } } } } } } }',
        ),
      ),
    ),
    schemaDocument(pools).chain((document) =>
      fc.nat({ max: Math.max(0, document.text.length - 1) }).map((cut) => ({ ...document, text: document.text.slice(0, cut) })),
    ),
    plain(fc.integer({ min: 10, max: 300 }).map((count) => `{ ${repeat(count, (index) => `a${index}: statistics { totalUsers }`)} }`)),
    plain(fc.integer({ min: 5, max: 80 }).map(nested)),
    plain(fc.integer({ min: 10, max: 300 }).map((count) => `{ statistics ${repeat(count, () => '@include(if: true)')} { totalUsers } }`)),
    plain(fc.integer({ min: 500, max: 6_000 }).map((count) => `{ users { ${repeat(count, () => 'id')} } }`)),
    plain(
      fc.constantFrom(
        'query A { statistics { totalUsers } } query B { statistics { totalPosts } }',
        '{ users { ...A } } fragment A on User { ...B } fragment B on User { ...A }',
        'fragment A on User { id }',
        '{ users { ...Missing } }',
        'query ($a: Int = "x") { users(limit: $a) { id } }',
        '{ user(id: 1) { ... on Post { id } } }',
        '{ users(limit: 1) { posts(limit: 1) { id } } }',
      ),
    ),
  );
}
