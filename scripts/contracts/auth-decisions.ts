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

/** The sentence a root field's description carries for its access decision (directives are not introspectable). */
export const ACCESS_SENTENCES = {
  public: 'Public: no credentials needed.',
  authenticated: 'Requires authentication (a Bearer token, the session cookie, an API key or a signed request).',
  admin: 'Requires the ADMIN role.',
} as const;

/**
 * What an introspection user cannot see: a root type, root field or argument of one without a description, and a root
 * field whose description does not state its access decision (ACCESS_SENTENCES), as `Type.field: problem`.
 */
export function introspectionProblems(sdl: string): string[] {
  const document = parse(sdl);
  const roots = rootNames(document);
  const problems: string[] = [];
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION || !roots.has(definition.name.value)) continue;
    if (!definition.description) problems.push(`${definition.name.value}: no description`);
    const typeAuth = definition.directives?.find((d) => d.name.value === 'auth');
    for (const field of definition.fields ?? []) {
      const where = `${definition.name.value}.${field.name.value}`;
      const description = field.description?.value ?? '';
      if (!description) problems.push(`${where}: no description`);
      for (const argument of field.arguments ?? []) if (!argument.description) problems.push(`${where}(${argument.name.value}): no description`);
      const auth = field.directives?.find((d) => d.name.value === 'auth') ?? typeAuth;
      const requires = auth?.arguments?.find((a) => a.name.value === 'requires')?.value;
      const admin = requires?.kind === Kind.ENUM && requires.value === 'ADMIN';
      const sentence = has(field.directives, 'public')
        ? ACCESS_SENTENCES.public
        : auth
          ? admin
            ? ACCESS_SENTENCES.admin
            : ACCESS_SENTENCES.authenticated
          : undefined;
      if (sentence && !description.includes(sentence)) problems.push(`${where}: the description does not say "${sentence}"`);
    }
  }
  return problems;
}
