// The remembered cost of an operation gives, under every ceiling, the answer a fresh walk of it gives.
import { describe, expect, it } from '@jest/globals';
import { getOperationAST, Kind, parse, type DocumentNode, type FragmentDefinitionNode } from 'graphql';
import { documentOperationCost, operationCost } from './cost.js';
import { buildGraphQLSchema } from '../schema/schema.js';

const schema = buildGraphQLSchema();
const MAX_COST = 5000;

function inputOf(document: DocumentNode, ceiling: number, variables: Record<string, unknown> = {}) {
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  return { schema, document, fragments, operation: getOperationAST(document)!, variables, ceiling };
}

const DOCUMENTS = {
  'a query by id': 'query ($id: ID!) { user(id: $id) { id name posts { id author { name } } } }',
  'nested lists with literal sizes': '{ users(limit: 7) { posts { author { posts { id } } } } posts(limit: 3) { author { id } } }',
  'fragments spread twice, under aliases':
    '{ a: users(limit: 4) { ...U } b: users(limit: 2) { ...U } } fragment U on User { posts { ...P } } fragment P on Post { author { id } }',
  // Introspection's single objects cost nothing of their own, so this walk visits more fields than its cost.
  'an introspection chain (visits above cost)': '{ __type(name: "User") { fields { type { ofType { ofType { ofType { name } } } } } } }',
  'a connection sized by first': '{ postsConnection(first: 5) { edges { node { author { posts { id } } } } } }',
  'deferred fragments, inline and spread':
    '{ users(limit: 3) { id ... @defer { posts { id } } ...U @defer } } fragment U on User { posts { author { id } } }',
};

describe('documentOperationCost', () => {
  it.each(Object.entries(DOCUMENTS))('answers as a fresh walk under every ceiling: %s', (_name, text) => {
    const document = parse(text);
    const exact = operationCost(inputOf(document, MAX_COST, { id: '1' }));
    expect(Number.isFinite(exact)).toBe(true);
    expect(documentOperationCost(inputOf(document, MAX_COST, { id: '1' }))).toBe(exact); // remembered from here on
    for (let ceiling = -1; ceiling <= exact + 2; ceiling++) {
      expect([ceiling, documentOperationCost(inputOf(document, ceiling, { id: '1' }))]).toEqual([
        ceiling,
        operationCost(inputOf(document, ceiling, { id: '1' })),
      ]);
    }
    // A batch refused earlier leaves no ceiling at all.
    expect(documentOperationCost(inputOf(document, Number.NEGATIVE_INFINITY))).toBe(Number.POSITIVE_INFINITY);
  });

  it('is not remembered past a walk that stopped, nor where a variable sizes a list or switches a selection', () => {
    const nested = parse('{ users(limit: 100) { posts { author { posts { id } } } } }');
    expect(documentOperationCost(inputOf(nested, 10))).toBe(Number.POSITIVE_INFINITY);
    expect(documentOperationCost(inputOf(nested, MAX_COST))).toBe(operationCost(inputOf(nested, MAX_COST)));

    const sized = parse('query ($n: Int) { users(limit: $n) { posts { id } } }');
    expect(documentOperationCost(inputOf(sized, MAX_COST, { n: 1 }))).toBe(1 * (1 + 5));
    expect(documentOperationCost(inputOf(sized, MAX_COST, { n: 100 }))).toBe(100 * (1 + 5));
    const inList = parse('query ($n: Int) { users(limit: $n) @include(if: true) { id } }');
    expect(documentOperationCost(inputOf(inList, MAX_COST, { n: 3 }))).toBe(3);
    expect(documentOperationCost(inputOf(inList, MAX_COST, { n: 30 }))).toBe(30);

    const switched = parse('query ($all: Boolean!) { user(id: "1") { id } ...F } fragment F on Query { users(limit: 50) @include(if: $all) { id } }');
    expect(documentOperationCost(inputOf(switched, MAX_COST, { all: false }))).toBe(1);
    expect(documentOperationCost(inputOf(switched, MAX_COST, { all: true }))).toBe(51);
  });

  it('walks the same operation again in another document (its fragments are that document’s)', () => {
    const first = parse('{ users(limit: 2) { ...U } } fragment U on User { id }');
    const second: DocumentNode = { ...first, definitions: [first.definitions[0]!, parse('fragment U on User { posts { id } }').definitions[0]!] };
    expect(documentOperationCost(inputOf(first, MAX_COST))).toBe(2);
    expect(documentOperationCost(inputOf(second, MAX_COST))).toBe(2 * (1 + 5));
  });
});

describe('deferred fragments (@defer) cost as the executor runs them', () => {
  const cost = (text: string, variables: Record<string, unknown> = {}) => documentOperationCost(inputOf(parse(text), MAX_COST, variables));
  const list = 'users(limit: 10) { posts { id } }'; // 10 × (1 + 5) = 60

  it('costs each identical deferred copy again, plus one for each deferred part', () => {
    expect(cost(`{ ${list} }`)).toBe(60);
    expect(cost(`{ ${list} ... @defer { ${list} } }`)).toBe(60 + 1 + 60);
    const copies = Array.from({ length: 40 }, () => `... @defer { ${list} }`).join(' ');
    expect(cost(`{ ${list} ${copies} }`)).toBe(60 + 40 * 61);
    const spreads = Array.from({ length: 40 }, () => '...L @defer').join(' ');
    expect(cost(`{ ${list} ${spreads} } fragment L on Query { ${list} }`)).toBe(60 + 40 * 61);
    // Inside a list, per item: each user runs its deferred part.
    expect(cost('{ users(limit: 10) { id ... @defer { posts { id } } } }')).toBe(10 * (1 + 1 + 5));
  });

  it('costs a fragment spread without @defer once, as before, and `@defer(if: false)` as no deferral', () => {
    expect(cost(`{ ...L ...L ...L } fragment L on Query { ${list} }`)).toBe(60);
    expect(cost(`{ ${list} ... @defer(if: false) { ${list} } }`)).toBe(60);
    expect(cost(`query ($d: Boolean!) { ${list} ... @defer(if: $d) { ${list} } }`, { d: false })).toBe(60);
    expect(cost(`query ($d: Boolean!) { ${list} ... @defer(if: $d) { ${list} } }`, { d: true })).toBe(121);
  });

  it('stops at the ceiling on a chain of fragments each deferring the next twice (2^20 parts), without expanding it', () => {
    const chain = Array.from({ length: 20 }, (_, i) => `fragment F${i} on Query { id: __typename ...F${i + 1} @defer ...F${i + 1} @defer }`).join(
      ' ',
    );
    const text = `{ ...F0 } ${chain} fragment F20 on Query { __typename }`;
    const started = performance.now();
    expect(operationCost(inputOf(parse(text), MAX_COST))).toBe(Number.POSITIVE_INFINITY);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
