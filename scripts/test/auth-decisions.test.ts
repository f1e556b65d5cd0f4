// The secure-by-default half of contracts:check: a root field without an access decision fails the check.
import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ACCESS_SENTENCES, authDecisionProblems, introspectionProblems } from '../contracts/auth-decisions.js';
import { repoRoot } from '../contracts/generate.js';

const DIRECTIVES = `
directive @auth(requires: String) on FIELD_DEFINITION | OBJECT
directive @public on FIELD_DEFINITION
type User { id: ID! }
`;

describe('every GraphQL root field carries @auth or @public', () => {
  it('holds for schema/schema.graphql', async () => {
    expect(authDecisionProblems(await readFile(path.join(repoRoot, 'schema/schema.graphql'), 'utf8'))).toEqual([]);
  });

  it('names a mutation without a decision', () => {
    const sdl = `${DIRECTIVES}
      type Query { me: User @auth }
      type Mutation { signUp(name: String!): User! @public  deleteEverything: Boolean! }`;
    expect(authDecisionProblems(sdl)).toEqual([
      'Mutation.deleteEverything has no access decision: add @auth(...) or, when it needs no credentials, @public',
    ]);
  });

  it('applies to Query and Subscription fields, to type extensions, and to renamed root types', () => {
    const sdl = `${DIRECTIVES}
      schema { query: Root  subscription: Events }
      type Root { open: User }
      extend type Root { alsoOpen: User }
      type Events { changed: User }
      type Query { notARoot: User }`;
    expect(authDecisionProblems(sdl).map((problem) => problem.split(' ')[0])).toEqual(['Root.open', 'Root.alsoOpen', 'Events.changed']);
  });

  it('accepts @auth on the root type itself, and refuses a field marked both ways', () => {
    const sdl = `${DIRECTIVES}
      type Mutation @auth { a: Boolean  b: Boolean @public }`;
    expect(authDecisionProblems(sdl)).toEqual(['Mutation.b carries both @auth and @public: decide one']);
  });
});

describe('an introspection user sees every root field described, with who may call it', () => {
  it('holds for schema/schema.graphql', async () => {
    expect(introspectionProblems(await readFile(path.join(repoRoot, 'schema/schema.graphql'), 'utf8'))).toEqual([]);
  });

  it('names a root type, field or argument without a description, and a description that hides the access decision', () => {
    const sdl = `${DIRECTIVES}
      "Reads." type Query {
        "The caller." me: User @auth
        "Anyone. ${ACCESS_SENTENCES.public}" user(id: ID!): User @public
      }
      type Mutation { "Gone. ${ACCESS_SENTENCES.authenticated}" wipe: Boolean @auth(requires: ADMIN) }`;
    expect(introspectionProblems(sdl)).toEqual([
      'Query.me: the description does not say "Requires authentication (a Bearer token, the session cookie, an API key or a signed request)."',
      'Query.user(id): no description',
      'Mutation: no description',
      'Mutation.wipe: the description does not say "Requires the ADMIN role."',
    ]);
  });
});
