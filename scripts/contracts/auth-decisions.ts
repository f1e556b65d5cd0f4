// The secure-by-default rule of contracts:check (Redwood's): every root field of schema/schema.graphql carries an
// explicit access decision, `@auth(...)` or `@public`, so a new operation cannot ship open by omission.
import { Kind, parse, type DirectiveNode, type DocumentNode, type ObjectTypeDefinitionNode, type ObjectTypeExtensionNode } from 'graphql';

/** Root types whose fields are doors into the service: each field needs a decision. */
const ROOT_OPERATIONS = ['query', 'mutation', 'subscription'] as const;
const DEFAULT_ROOT_NAMES = { query: 'Query', mutation: 'Mutation', subscription: 'Subscription' } as const;

type ObjectNode = ObjectTypeDefinitionNode | ObjectTypeExtensionNode;
const has = (directives: readonly DirectiveNode[] | undefined, name: string) => directives?.some((d) => d.name.value === name) ?? false;

/** The root type names, honouring a `schema { … }` definition when the SDL has one. */
function rootNames(document: DocumentNode): Map<string, string> {
  const names = new Map<string, string>(ROOT_OPERATIONS.map((operation) => [DEFAULT_ROOT_NAMES[operation], operation]));
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.SCHEMA_DEFINITION) continue;
    names.clear();
    for (const operation of definition.operationTypes) names.set(operation.type.name.value, operation.operation);
  }
  return names;
}

/**
 * Every root field without `@auth` or `@public` (or with both), as `Type.field: problem`. A root type carrying `@auth`
 * itself decides for all its fields.
 */
export function authDecisionProblems(sdl: string): string[] {
  const document = parse(sdl);
  const roots = rootNames(document);
  const problems: string[] = [];
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION && definition.kind !== Kind.OBJECT_TYPE_EXTENSION) continue;
    const type = definition as ObjectNode;
    if (!roots.has(type.name.value)) continue;
    const typeDecided = has(type.directives, 'auth');
    for (const field of type.fields ?? []) {
      const auth = typeDecided || has(field.directives, 'auth');
      const open = has(field.directives, 'public');
      const where = `${type.name.value}.${field.name.value}`;
      if (auth && open) problems.push(`${where} carries both @auth and @public: decide one`);
      else if (!auth && !open) {
        problems.push(`${where} has no access decision: add @auth(...) or, when it needs no credentials, @public`);
      }
    }
  }
  return problems;
}
