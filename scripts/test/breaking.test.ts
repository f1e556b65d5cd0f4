// Breaking-change detection: GraphQL and OpenAPI rules on small fixtures, and the git-based check.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from '@jest/globals';
import { parseYaml, stringifyYaml as stringify } from '../contracts/yaml.js';
import { checkBreakingAgainst, defaultBaseRev, graphqlBreakingChanges, openapiBreakingChanges } from '../contracts/breaking.js';

// The fixtures are edited freely as plain objects.
const parse = (text: string): any => parseYaml(text);

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/breaking');
const baseSdl = readFileSync(path.join(fixtures, 'schema.graphql'), 'utf8');
const baseDoc = readFileSync(path.join(fixtures, 'openapi.yaml'), 'utf8');

/** Replaces one exact occurrence in the base SDL (failing loudly if the fixture changed). */
function editSdl(from: string, to: string): string {
  expect(baseSdl.split(from)).toHaveLength(2);
  return baseSdl.replace(from, to);
}

/** A copy of the base OpenAPI document with `change` applied to its parsed form. */
function editDoc(change: (doc: any) => void): string {
  const doc = parse(baseDoc);
  change(doc);
  return stringify(doc);
}

describe('graphqlBreakingChanges', () => {
  test('identical schemas have no breaking change', async () => {
    expect(await graphqlBreakingChanges(baseSdl, baseSdl)).toEqual([]);
  });

  test('removing a field is breaking', async () => {
    const changes = await graphqlBreakingChanges(baseSdl, editSdl('  bio: String\n', ''));
    expect(changes).toEqual([{ contract: 'graphql', message: "Field 'bio' was removed from object type 'User'", path: 'User.bio', removal: true }]);
  });

  test('adding an optional field or an optional argument is not breaking', async () => {
    const head = editSdl('  bio: String\n', '  bio: String\n  email: String\n').replace('users(first: Int)', 'users(first: Int, after: String)');
    expect(await graphqlBreakingChanges(baseSdl, head)).toEqual([]);
  });

  test('making a nullable input field non-null is breaking', async () => {
    const changes = await graphqlBreakingChanges(baseSdl, editSdl('nickname: String\n', 'nickname: String!\n'));
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ contract: 'graphql', path: 'CreateUserInput.nickname' });
  });
});

describe('openapiBreakingChanges', () => {
  const paths = async (head: string) => (await openapiBreakingChanges(baseDoc, head)).map((c) => c.path);

  test('identical documents have no breaking change', async () => {
    expect(await openapiBreakingChanges(baseDoc, baseDoc)).toEqual([]);
  });

  test('removing an operation is breaking', async () => {
    const changes = await openapiBreakingChanges(
      baseDoc,
      editDoc((d) => delete d.paths['/users/{id}'].delete),
    );
    expect(changes).toEqual([
      {
        contract: 'openapi',
        message: 'DELETE /users/{id}: cannot remove an operation. This is a breaking change.',
        path: '/paths/~1users~1{id}/delete',
        removal: true,
      },
    ]);
  });

  test('removing a path is breaking, reported once per operation', async () => {
    const removed = await paths(editDoc((d) => delete d.paths['/users/{id}']));
    expect(removed).toEqual(['/paths/~1users~1{id}/get', '/paths/~1users~1{id}/delete']);
  });

  test('removing a response property is breaking, wherever the schema is used', async () => {
    const removed = await paths(editDoc((d) => delete d.components.schemas.User.properties.bio));
    expect(removed).toEqual([
      '/paths/~1users/get/responses/200/content/application~1json/schema/items/properties/bio',
      '/paths/~1users/post/responses/201/content/application~1json/schema/properties/bio',
      '/paths/~1users~1{id}/get/responses/200/content/application~1json/schema/properties/bio',
    ]);
  });

  test('a change inside a $ref cycle is still seen', async () => {
    const removed = await paths(editDoc((d) => delete d.components.schemas.Post.properties.title));
    expect(removed).toContain('/paths/~1users~1{id}/get/responses/200/content/application~1json/schema/properties/posts/items/properties/title');
  });

  test('adding an optional response property or an optional query parameter is not breaking', async () => {
    const head = editDoc((d) => {
      d.components.schemas.User.properties.email = { type: ['string', 'null'] };
      d.paths['/users'].get.parameters.push({ name: 'offset', in: 'query', required: false, schema: { type: 'integer' } });
    });
    expect(await openapiBreakingChanges(baseDoc, head)).toEqual([]);
  });

  test('making an optional request property required is breaking', async () => {
    const changes = await openapiBreakingChanges(
      baseDoc,
      editDoc((d) => d.components.schemas.UserInput.required.push('bio')),
    );
    expect(changes).toEqual([
      {
        contract: 'openapi',
        message: expect.stringContaining('cannot make a request property required'),
        path: '/paths/~1users/post/requestBody/content/application~1json/schema/properties/bio',
      },
    ]);
  });

  test('narrowing a 3.1 type array (dropping null) on a request property is breaking', async () => {
    const changes = await openapiBreakingChanges(
      baseDoc,
      editDoc((d) => (d.components.schemas.UserInput.properties.bio.type = 'string')),
    );
    expect(changes.map((c) => c.path)).toEqual(['/paths/~1users/post/requestBody/content/application~1json/schema/properties/bio']);
  });
});

describe('request tightening and response loosening (constraints.ts, rules Optic lacks)', () => {
  /** Changes between two edits of the fixture (a base with a constraint, a head that changes it). */
  const between = async (base: (doc: any) => void, head: (doc: any) => void) => openapiBreakingChanges(editDoc(base), editDoc(head));
  const name = '/paths/~1users/post/requestBody/content/application~1json/schema/properties/name';
  const withName = (constraints: object) => (doc: any) => Object.assign(doc.components.schemas.UserInput.properties.name, constraints);

  test.each([
    ['a maxLength lowered', { maxLength: 100 }, { maxLength: 50 }, 'request maxLength tightened from 100 to 50'],
    ['a maxLength added', {}, { maxLength: 50 }, 'request maxLength tightened from none to 50'],
    ['a minLength raised', { minLength: 1 }, { minLength: 3 }, 'request minLength tightened from 1 to 3'],
    ['a pattern added', {}, { pattern: '^[a-z]+$' }, 'request pattern added: "^[a-z]+$"'],
    ['a format changed', { format: 'email' }, { format: 'uuid' }, 'request format changed: "uuid"'],
    ['an enum added (Optic)', {}, { enum: ['a', 'b'] }, 'cannot add enum or const to request property name'],
    ['an enum value removed (Optic)', { enum: ['a', 'b'] }, { enum: ['a'] }, "cannot remove enum option 'b'"],
  ])('%s on a request property is breaking', async (_case, before, after, message) => {
    expect(await between(withName(before), withName(after))).toEqual([
      { contract: 'openapi', message: expect.stringContaining(message), path: name },
    ]);
  });

  test('an integer format within the bounds already declared is not breaking; one that narrows them is', async () => {
    const age = (schema: object) => (doc: any) => (doc.components.schemas.UserInput.properties.name = { type: 'integer', ...schema });
    expect(await between(age({ minimum: 1, maximum: 2147483647 }), age({ minimum: 1, maximum: 2147483647, format: 'int32' }))).toEqual([]);
    expect(await between(age({ minimum: 0 }), age({ minimum: 0, format: 'int32' }))).toEqual([
      { contract: 'openapi', message: 'request format added: "int32"', path: name },
    ]);
    expect(await between(age({ minimum: 0, maximum: 2 ** 40 }), age({ minimum: 0, maximum: 2 ** 40, format: 'int32' }))).toHaveLength(1);
  });

  test.each([
    ['a maxLength raised', { maxLength: 50 }, { maxLength: 100 }],
    ['a minLength lowered', { minLength: 3 }, { minLength: 1 }],
    ['a pattern removed', { pattern: '^[a-z]+$' }, {}],
    ['an enum value added', { enum: ['a'] }, { enum: ['a', 'b'] }],
  ])('%s on a request property is not breaking', async (_case, before, after) => {
    expect(await between(withName(before), withName(after))).toEqual([]);
  });

  test('an object closed to additional properties, and a body made required, are breaking', async () => {
    const changes = await between(
      (doc) => (doc.paths['/users'].post.requestBody.required = false),
      (doc) => {
        doc.components.schemas.UserInput.additionalProperties = false;
      },
    );
    expect(changes.map((change) => change.message).sort()).toEqual(['request body made required', 'request object closed to additional properties']);
  });

  test('a range tightened on a query parameter, and a parameter made required (Optic), are breaking', async () => {
    const limit =
      (schema: object, required = false) =>
      (doc: any) =>
        Object.assign(doc.paths['/users'].get.parameters[0], { required, schema: { type: 'integer', ...schema } });
    const tightened = await between(limit({ maximum: 100 }), limit({ maximum: 50, minimum: 1 }, true));
    expect(tightened.map((change) => change.message).sort()).toEqual([
      expect.stringContaining("cannot make optional query parameter 'limit' required"),
      'request maximum tightened from 100 to 50',
      'request minimum tightened from none to 1',
    ]);
  });

  test('a new required query parameter is breaking (Optic); a new optional one is not', async () => {
    const added = (required: boolean) => (doc: any) =>
      doc.paths['/users'].get.parameters.push({ name: 'tenant', in: 'query', required, schema: { type: 'string' } });
    expect(await between(() => undefined, added(true))).toEqual([
      {
        contract: 'openapi',
        message: expect.stringContaining('cannot add required query parameter tenant'),
        path: '/paths/~1users/get/parameters/1',
      },
    ]);
    expect(await between(() => undefined, added(false))).toEqual([]);
  });

  test('a response property no longer required, or made nullable, is breaking wherever it is answered (Optic)', async () => {
    const optional = await between(
      () => undefined,
      (doc) => (doc.components.schemas.User.required = ['id']),
    );
    expect(optional.map((change) => change.message)).toEqual(
      Array(3).fill(expect.stringContaining("cannot make required response property 'name' optional")),
    );
    const nullable = await between(
      () => undefined,
      (doc) => (doc.components.schemas.User.properties.name.type = ['string', 'null']),
    );
    expect(nullable.map((change) => change.message)).toEqual(
      Array(3).fill(expect.stringContaining("expected response body property 'name' not to be expanded")),
    );
  });

  test('a property added to a response object declared closed is breaking; to an open one it is not', async () => {
    const withNickname = (closed: boolean) => (doc: any) => {
      doc.components.schemas.User.additionalProperties = closed ? false : undefined;
      doc.components.schemas.User.properties.nickname = { type: 'string' };
    };
    const closedBase = (doc: any) => (doc.components.schemas.User.additionalProperties = false);
    const closed = await between(closedBase, withNickname(true));
    expect(closed.map((change) => change.message)).toContain('response object closed to additional properties now has nickname');
    expect((await between(() => undefined, withNickname(false))).map((change) => change.message)).not.toContainEqual(
      expect.stringContaining('now has nickname'),
    );
  });

  test('inside oneOf alternatives too: a property added to a closed one, a request bound tightened in one', async () => {
    // The User answer as a page or a cursor page (each closed, told apart by `paging`), as the page envelopes are.
    const envelopes = (extra: Record<string, unknown> | undefined) => (doc: any) => {
      const page = { type: 'object', additionalProperties: false, properties: { paging: { const: 'page' }, total: { type: 'integer' } } };
      const cursor = { type: 'object', additionalProperties: false, properties: { paging: { const: 'cursor' }, next: { type: 'string' } } };
      if (extra) Object.assign(page.properties, extra);
      // The head lists them the other way round: they are matched by `paging`, not by position.
      doc.paths['/users'].get.responses['200'].content['application/json'].schema = { oneOf: extra ? [cursor, page] : [page, cursor] };
      const body = doc.paths['/users'].post.requestBody.content['application/json'];
      body.schema = { oneOf: [{ type: 'object', properties: { kind: { const: 'a' }, name: { type: 'string', maxLength: extra ? 10 : 100 } } }] };
    };
    const changes = await between(envelopes(undefined), envelopes({ totalExact: { type: 'boolean' } }));
    expect(changes.map((change) => `${change.path} ${change.message}`)).toEqual(
      expect.arrayContaining([
        '/paths/~1users/get/responses/200/content/application~1json/schema/oneOf/1 response object closed to additional properties now has totalExact',
        '/paths/~1users/post/requestBody/content/application~1json/schema/oneOf/0/properties/name request maxLength tightened from 100 to 10',
      ]),
    );
    expect(await between(envelopes(undefined), envelopes(undefined))).toEqual([]);
  });

  test('a value added to a response enum is breaking (Optic; decided: clients switch over the values)', async () => {
    const role = (values: string[]) => (doc: any) => (doc.components.schemas.User.properties.role = { type: 'string', enum: values });
    const changes = await between(role(['USER', 'ADMIN']), role(['USER', 'ADMIN', 'AUDITOR']));
    expect(changes.map((change) => change.message)).toEqual(Array(3).fill(expect.stringContaining("cannot add enum option 'AUDITOR'")));
  });
});

describe('GraphQL changes graphql-inspector calls dangerous and a consumer meets as broken', () => {
  test('an argument default changed is breaking', async () => {
    const base = editSdl('users(first: Int)', 'users(first: Int = 10)');
    const changes = await graphqlBreakingChanges(base, base.replace('users(first: Int = 10)', 'users(first: Int = 20)'));
    expect(changes.map((change) => change.path)).toEqual(['Query.users.first']);
  });

  test('a value added to an enum that appears in answers is breaking; to an input-only enum it is not', async () => {
    const base = `${baseSdl}\nenum Role { USER ADMIN }\nenum Sort { NAME }\nextend type User { role: Role! }\nextend type Query { sorted(by: Sort): [User!]! }\n`;
    expect(
      (await graphqlBreakingChanges(base, base.replace('enum Role { USER ADMIN }', 'enum Role { USER ADMIN AUDITOR }'))).map((c) => c.path),
    ).toEqual(['Role.AUDITOR']);
    expect(await graphqlBreakingChanges(base, base.replace('enum Sort { NAME }', 'enum Sort { NAME EMAIL }'))).toEqual([]);
  });

  test('a member removed from a union is breaking', async () => {
    const base = `${baseSdl}\ntype Post { id: ID! }\nunion Result = User | Post\nextend type Query { search: [Result!]! }\n`;
    expect((await graphqlBreakingChanges(base, base.replace('union Result = User | Post', 'union Result = User'))).length).toBe(1);
  });
});

describe('access decisions and field privacy (access.ts): asking more of a caller, or showing a field to fewer, is breaking', () => {
  const directives = [
    'enum Role { USER ADMIN }',
    'directive @auth(requires: Role = USER) on FIELD_DEFINITION | OBJECT',
    'directive @public on FIELD_DEFINITION',
    'directive @private on FIELD_DEFINITION',
    '',
  ].join('\n');
  /** The fixture with the access decisions of a real schema: `users` public, `createUser` for any authenticated caller. */
  const decided = `${directives}${editSdl('users(first: Int): [User!]!', 'users(first: Int): [User!]! @public').replace(
    'createUser(input: CreateUserInput!): User!',
    'createUser(input: CreateUserInput!): User! @auth',
  )}`;
  const edit = (from: string, to: string) => {
    expect(decided.split(from)).toHaveLength(2);
    return decided.replace(from, to);
  };

  test('GraphQL: a public field that now requires authentication is breaking', async () => {
    expect(await graphqlBreakingChanges(decided, edit('[User!]! @public', '[User!]! @auth'))).toEqual([
      { contract: 'graphql', message: "Field 'Query.users' now requires authentication (it required no credentials)", path: 'Query.users' },
    ]);
  });

  test('GraphQL: a role raised from USER to ADMIN is breaking, and so is @auth put on a type (all its fields)', async () => {
    expect(await graphqlBreakingChanges(decided, edit('User! @auth', 'User! @auth(requires: ADMIN)'))).toEqual([
      {
        contract: 'graphql',
        message: "Field 'Mutation.createUser' now requires the ADMIN role (it required authentication)",
        path: 'Mutation.createUser',
      },
    ]);
    const guarded = await graphqlBreakingChanges(decided, edit('type User {', 'type User @auth {'));
    expect(guarded.map((change) => change.path)).toEqual(['User.id', 'User.name', 'User.bio']);
  });

  test('GraphQL: opening a field, lowering its role, or spelling out the default role is not breaking', async () => {
    const admin = edit('User! @auth', 'User! @auth(requires: ADMIN)');
    expect(await graphqlBreakingChanges(admin, decided)).toEqual([]);
    expect(await graphqlBreakingChanges(decided, edit('User! @auth', 'User! @public'))).toEqual([]);
    // graphql-inspector reports this as an argument added; USER is the default, so nothing changed for a caller.
    expect(await graphqlBreakingChanges(decided, edit('User! @auth', 'User! @auth(requires: USER)'))).toEqual([]);
  });

  test('GraphQL: an existing field made @private is breaking; made public again, or a new @private field, is not', async () => {
    const privateBio = edit('  bio: String\n', '  bio: String @private\n');
    expect(await graphqlBreakingChanges(decided, privateBio)).toEqual([
      { contract: 'graphql', message: "Field 'User.bio' was made private (@private): fewer callers see its value", path: 'User.bio.@private' },
    ]);
    expect(await graphqlBreakingChanges(privateBio, decided)).toEqual([]);
    expect(await graphqlBreakingChanges(decided, edit('  bio: String\n', '  bio: String\n  email: String @private\n'))).toEqual([]);
  });

  /** The OpenAPI fixture behind a bearer scheme, the reads opened by `security: []` (as openapi.yaml does). */
  const secured = (doc: any) => {
    doc.components.securitySchemes = { bearerAuth: { type: 'http', scheme: 'bearer' } };
    doc.security = [{ bearerAuth: [] }];
    doc.paths['/users'].get.security = [];
    doc.paths['/users/{id}'].get.security = [{}, { bearerAuth: [] }];
  };
  const between = async (base: (doc: any) => void, head: (doc: any) => void) => openapiBreakingChanges(editDoc(base), editDoc(head));
  const then =
    (...edits: ((doc: any) => void)[]) =>
    (doc: any) =>
      edits.forEach((change) => change(doc));

  test('OpenAPI: a public operation that now requires credentials is breaking, also when it inherits the top-level security', async () => {
    expect(
      await between(
        secured,
        then(secured, (d) => delete d.paths['/users'].get.security),
      ),
    ).toEqual([
      { contract: 'openapi', message: 'GET /users: was public and now requires credentials (security)', path: '/paths/~1users/get/security' },
    ]);
    // `{}` among the alternatives made credentials optional; dropping it makes them required.
    expect(
      await between(
        secured,
        then(secured, (d) => (d.paths['/users/{id}'].get.security = [{ bearerAuth: [] }])),
      ),
    ).toEqual([
      {
        contract: 'openapi',
        message: 'GET /users/{id}: was public and now requires credentials (security)',
        path: '/paths/~1users~1{id}/get/security',
      },
    ]);
    // The whole fixture had no security at all: every operation was public.
    expect((await between(() => undefined, secured)).map((change) => change.path)).toEqual([
      '/paths/~1users/post/security',
      '/paths/~1users~1{id}/delete/security',
    ]);
  });

  test('OpenAPI: an x-required-role added or raised is breaking; lowered or removed, or an operation opened, is not', async () => {
    const role = (value?: string) => (doc: any) => {
      secured(doc);
      if (value) doc.paths['/users/{id}'].delete['x-required-role'] = value;
    };
    expect(await between(role(), role('ADMIN'))).toEqual([
      {
        contract: 'openapi',
        message: 'DELETE /users/{id}: now requires the ADMIN role (x-required-role added)',
        path: '/paths/~1users~1{id}/delete/x-required-role',
      },
    ]);
    expect(await between(role('USER'), role('ADMIN'))).toEqual([
      expect.objectContaining({ message: 'DELETE /users/{id}: now requires the ADMIN role (x-required-role raised from USER)' }),
    ]);
    expect(await between(role('ADMIN'), role('USER'))).toEqual([]);
    expect(await between(role('ADMIN'), role())).toEqual([]);
    expect(await between(secured, () => undefined)).toEqual([]);
  });

  test('OpenAPI: a response property made x-private is breaking wherever it is answered; made public again it is not', async () => {
    const privateBio = (doc: any) => (doc.components.schemas.User.properties.bio['x-private'] = true);
    const changes = await between(() => undefined, privateBio);
    expect(changes.map((change) => change.path)).toEqual([
      '/paths/~1users/get/responses/200/content/application~1json/schema/items/properties/bio',
      '/paths/~1users/post/responses/201/content/application~1json/schema/properties/bio',
      '/paths/~1users~1{id}/get/responses/200/content/application~1json/schema/properties/bio',
    ]);
    expect(changes[0]?.message).toBe("GET /users: response property 'bio' was made private (x-private): fewer callers see its value");
    expect(await between(privateBio, () => undefined)).toEqual([]);
    // A new property that is private from the start takes nothing from anyone.
    expect(
      await between(
        () => undefined,
        (doc) => (doc.components.schemas.User.properties.email = { type: 'string', 'x-private': true }),
      ),
    ).toEqual([]);
  });
});

describe('checkBreakingAgainst', () => {
  const tmpDirs: string[] = [];
  afterAll(() => tmpDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  /** A fresh git repo whose single commit holds the given contract files. */
  function repoWithCommit(files: Record<string, string>): string {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'breaking-'));
    tmpDirs.push(dir);
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false', ...args], {
        cwd: dir,
        stdio: 'pipe',
      });
    git('init', '-q');
    for (const [file, content] of Object.entries(files)) {
      mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
      writeFileSync(path.join(dir, file), content);
    }
    git('add', '.');
    git('commit', '-q', '-m', 'base contracts');
    return dir;
  }

  test('reports changes of the working tree against the base revision', async () => {
    const dir = repoWithCommit({ 'schema/schema.graphql': baseSdl, 'openapi/openapi.yaml': baseDoc });
    writeFileSync(path.join(dir, 'schema/schema.graphql'), editSdl('  bio: String\n', ''));
    writeFileSync(
      path.join(dir, 'openapi/openapi.yaml'),
      editDoc((d) => delete d.paths['/users/{id}'].delete),
    );

    const result = await checkBreakingAgainst('HEAD', dir);
    expect(result.skipped).toBeUndefined();
    expect(result.changes).toContainEqual(expect.objectContaining({ contract: 'graphql', path: 'User.bio' }));
    expect(result.changes).toContainEqual(expect.objectContaining({ contract: 'openapi', path: '/paths/~1users~1{id}/delete' }));
  });

  test('a contract that did not exist at the base revision is skipped, the other still compared', async () => {
    const dir = repoWithCommit({ 'schema/schema.graphql': baseSdl });
    writeFileSync(path.join(dir, 'schema/schema.graphql'), editSdl('  bio: String\n', ''));
    mkdirSync(path.join(dir, 'openapi'));
    writeFileSync(path.join(dir, 'openapi/openapi.yaml'), baseDoc);

    const result = await checkBreakingAgainst('HEAD', dir);
    expect(result.skipped).toBe('openapi/openapi.yaml did not exist at HEAD');
    expect(result.changes.map((c) => c.path)).toEqual(['User.bio']);
  });

  test('a revision that does not exist (HEAD~1 of a single commit) is skipped', async () => {
    const dir = repoWithCommit({ 'schema/schema.graphql': baseSdl, 'openapi/openapi.yaml': baseDoc });
    expect(await checkBreakingAgainst('HEAD~1', dir)).toEqual({ baseRev: 'HEAD~1', changes: [], skipped: 'base revision HEAD~1 does not exist' });

    const saved = process.env.CONTRACTS_BASE;
    delete process.env.CONTRACTS_BASE;
    try {
      expect(await defaultBaseRev(dir)).toBeUndefined();
      process.env.CONTRACTS_BASE = 'v1.2.3';
      expect(await defaultBaseRev(dir)).toBe('v1.2.3');
    } finally {
      if (saved === undefined) delete process.env.CONTRACTS_BASE;
      else process.env.CONTRACTS_BASE = saved;
    }
  });
});

describe("issue 41: the gate's blind spots, on properties whose schema is a $ref, an anyOf or private, not only plain ones", () => {
  /** User and UserInput with a property of each kind, all required. */
  const kinds = (doc: any) => {
    doc.components.schemas.Handle = { type: 'string', maxLength: 30 };
    const properties = {
      handle: { $ref: '#/components/schemas/Handle' },
      email: { anyOf: [{ type: 'string', format: 'email' }, { const: '' }] },
      secret: { type: 'string', 'x-private': true },
      contact: { anyOf: [{ $ref: '#/components/schemas/Handle' }, { type: 'null' }], 'x-private': true },
    };
    for (const schema of [doc.components.schemas.User, doc.components.schemas.UserInput])
      Object.assign(schema.properties, JSON.parse(JSON.stringify(properties)));
    doc.components.schemas.User.required.push(...Object.keys(properties));
  };
  const between = async (base: (doc: any) => void, head: (doc: any) => void) => openapiBreakingChanges(editDoc(base), editDoc(head));
  const then =
    (...edits: ((doc: any) => void)[]) =>
    (doc: any) =>
      edits.forEach((change) => change(doc));

  test.each(['name', 'handle', 'email', 'secret', 'contact'])(
    'a response property (%s) taken out of `required` is breaking wherever it is answered',
    async (name) => {
      const changes = await between(
        kinds,
        then(kinds, (d) => (d.components.schemas.User.required = d.components.schemas.User.required.filter((n: string) => n !== name))),
      );
      expect(changes.map((change) => change.path)).toEqual([
        `/paths/~1users/get/responses/200/content/application~1json/schema/items/properties/${name}`,
        `/paths/~1users/post/responses/201/content/application~1json/schema/properties/${name}`,
        `/paths/~1users~1{id}/get/responses/200/content/application~1json/schema/properties/${name}`,
      ]);
    },
  );

  test.each(['bio', 'handle', 'email', 'secret', 'contact'])('a request property (%s) made required is breaking', async (name) => {
    const changes = await between(
      kinds,
      then(kinds, (d) => d.components.schemas.UserInput.required.push(name)),
    );
    expect(changes.map((change) => change.path)).toEqual([`/paths/~1users/post/requestBody/content/application~1json/schema/properties/${name}`]);
  });

  test('the regression: `email` of the real openapi.yaml User taken out of `required` is breaking', async () => {
    const real = readFileSync(path.join(fixtures, '../../../../openapi/openapi.yaml'), 'utf8');
    const required = 'required: [id, name, email, age, role, createdAt, updatedAt]\n      properties:\n        id:';
    expect(real.split(required)).toHaveLength(2);
    const changes = await openapiBreakingChanges(real, real.replace(required, required.replace('email, ', '')));
    expect(changes.length).toBeGreaterThan(0);
    expect(changes.every((change) => change.message === "response property 'email' no longer required: answers may lack it")).toBe(true);
    expect(changes.map((change) => change.path)).toContainEqual(
      expect.stringMatching(/^\/paths\/~1api~1v1~1users~1\{id\}\/get\/responses\/200\/.*\/properties\/email$/),
    );
  }, 30_000);

  /** The list answer as alternatives, and the create body as alternatives (no `const` key on either). */
  const unions =
    (answers: object[], bodies: object[], keyword = 'oneOf') =>
    (doc: any) => {
      doc.paths['/users'].get.responses['200'].content['application/json'].schema = { [keyword]: answers };
      doc.paths['/users'].post.requestBody.content['application/json'].schema = { [keyword]: bodies };
    };
  const list = { type: 'array', items: { $ref: '#/components/schemas/User' } };
  const page = { type: 'object', properties: { items: list, total: { type: 'integer' } } };
  const cursorPage = { type: 'object', properties: { items: list, next: { type: 'string' } } };
  const byName = { type: 'object', properties: { name: { type: 'string' } } };
  const byEmail = { type: 'object', properties: { email: { type: 'string' } } };
  const keyed = (kind: string, extra: object) => ({ type: 'object', properties: { kind: { const: kind }, ...extra } });

  test.each(['oneOf', 'anyOf'])('%s: an alternative added to an answer is breaking, without a const key too', async (keyword) => {
    const added = await between(unions([list, page], [byName], keyword), unions([list, page, cursorPage], [byName], keyword));
    expect(added.map((change) => `${change.path} ${change.message}`)).toEqual([
      `/paths/~1users/get/responses/200/content/application~1json/schema/${keyword}/2 response ${keyword} alternative added: "object" {items, next}`,
    ]);
    const keyedAdded = await between(
      unions([keyed('page', {}), keyed('list', {})], [byName], keyword),
      unions([keyed('list', {}), keyed('page', {}), keyed('cursor', {})], [byName], keyword),
    );
    expect(keyedAdded.map((change) => change.message)).toEqual([`response ${keyword} alternative added: kind="cursor"`]);
  });

  test.each(['oneOf', 'anyOf'])('%s: an alternative removed from a request is breaking, without a const key too', async (keyword) => {
    const removed = await between(unions([list], [byName, byEmail], keyword), unions([list], [byName], keyword));
    expect(removed.map((change) => change.message)).toContainEqual(`request ${keyword} alternative removed: "object" {email}`);
    expect(removed.every((change) => change.path?.startsWith('/paths/~1users/post/requestBody'))).toBe(true);
  });

  test('an alternative removed from an answer is breaking (as a GraphQL union member removed is)', async () => {
    const removed = await between(unions([list, page], [byName]), unions([list], [byName]));
    expect(removed.map((change) => change.path)).toEqual(['/paths/~1users/get/responses/200/content/application~1json']);
    expect(removed[0]?.message).toContain('oneOf schema did not overlap with the previous schema'); // Optic's report, kept
  });

  test('an alternative added to a request is not breaking; nor is a reordering, keyed or not', async () => {
    expect(await between(unions([list], [byName]), unions([list], [byName, byEmail]))).toEqual([]);
    expect(await between(unions([list, page, cursorPage], [byName, byEmail]), unions([cursorPage, list, page], [byEmail, byName]))).toEqual([]);
    expect(await between(unions([keyed('page', {}), keyed('list', {})], [byName]), unions([keyed('list', {}), keyed('page', {})], [byName]))).toEqual(
      [],
    );
  });

  test('a reordered union still compares each alternative with its own: a change inside one is found', async () => {
    const narrowed = { type: 'object', properties: { name: { type: 'string', maxLength: 10 } } };
    const changes = await between(unions([list], [byName, byEmail]), unions([list], [byEmail, narrowed]));
    expect(changes.map((change) => `${change.path} ${change.message}`)).toEqual([
      '/paths/~1users/post/requestBody/content/application~1json/schema/oneOf/1/properties/name request maxLength tightened from none to 10',
    ]);
  });

  test('on a property whose schema is an anyOf ($ref alternatives): an alternative added to the answer is breaking', async () => {
    const email = (alternatives: object[]) => (doc: any) => {
      kinds(doc);
      doc.components.schemas.User.properties.email = { anyOf: alternatives, 'x-private': true };
    };
    const changes = await between(
      email([{ $ref: '#/components/schemas/Handle' }, { const: '' }]),
      email([{ $ref: '#/components/schemas/Handle' }, { const: '' }, { type: 'null' }]),
    );
    expect(changes.map((change) => change.message)).toContainEqual('response anyOf alternative added: "null"');
  });
});
