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
