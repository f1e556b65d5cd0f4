// No field a green pipeline can silently drop (issue 29): for every writable field of every write path of the contracts,
// a valid value drawn from the field's own schema is written, then read back through both doors, and must be what was
// written. A field the server accepts and does not keep fails here, named. The paths are read from the contracts, so a
// field added to an input is walked without editing this file.
import { describe, expect, it } from '@jest/globals';
import { buildSchema, getNamedType, isInputObjectType, isObjectType, type GraphQLSchema } from 'graphql';
import { readFileSync } from 'node:fs';
import { graphqlSchemaPath } from '../../src/paths.js';
import { useTestApp } from '../support/app.js';
import { fieldsOf, validValue } from '../support/contract-values.js';
import { graphql } from '../support/graphql.js';

const suite = useTestApp({ rateLimits: { signup: { max: 100_000, windowMs: 3_600_000 } } });
const sdl: GraphQLSchema = buildSchema(readFileSync(graphqlSchemaPath, 'utf8'));

/** The fields of an SDL object or input type. */
function sdlFields(typeName: string): string[] {
  const type = sdl.getType(typeName);
  if (!isObjectType(type) && !isInputObjectType(type)) throw new Error(`${typeName} is not an object or input type`);
  return Object.keys(type.getFields());
}

/** The user's fields readable through GraphQL (scalars and enums only), as selected in a read-back. */
const readableUserFields = () =>
  Object.values((sdl.getType('User') as ReturnType<typeof sdl.getQueryType> & object).getFields())
    .filter((field) => !isObjectType(getNamedType(field.type)))
    .map((field) => field.name);

/** A valid value for each field of a contract input, drawn from the OpenAPI schema of the same name. */
function valuesFor(schemaName: string, fields: readonly string[]): Record<string, unknown> {
  const schemas = fieldsOf(schemaName);
  return Object.fromEntries(
    fields.map((field) => {
      const schema = schemas[field];
      if (!schema) throw new Error(`${schemaName}.${field} is in schema.graphql's input but not in openapi.yaml's ${schemaName}`);
      return [field, validValue(field, schema)];
    }),
  );
}

/** Reads the user back through both doors (as an ADMIN, who may see every field) and checks each written field. */
async function expectKept(id: number, written: Record<string, unknown>, path: string): Promise<void> {
  const rest = (await suite.app.inject({ method: 'GET', url: `/api/v1/users/${id}`, headers: suite.admin.headers })).json().data;
  const readable = readableUserFields();
  const viaGraphql = await graphql<{ user: Record<string, unknown> }>(
    suite.app,
    `query ($id: ID!) { user(id: $id) { ${readable.join(' ')} } }`,
    { id: String(id) },
    suite.admin.headers,
  );
  for (const [field, value] of Object.entries(written)) {
    if (field === 'password') {
      // Write-only: kept when it logs in.
      const login = await suite.app.inject({ method: 'POST', url: '/login', payload: { email: rest.email, password: value } });
      expect({ path, field, kept: login.statusCode === 200 }).toEqual({ path, field, kept: true });
      continue;
    }
    expect({ path, field, door: 'REST', read: rest[field] }).toEqual({ path, field, door: 'REST', read: value });
    expect({ path, field, door: 'GraphQL', read: viaGraphql.data?.user?.[field] }).toEqual({ path, field, door: 'GraphQL', read: value });
  }
}

const adminWrite = (method: 'PUT' | 'PATCH' | 'POST', url: string, payload: unknown) =>
  suite.app.inject({ method, url, headers: suite.admin.headers, payload: payload as object });

const createUserFields = () => Object.keys(fieldsOf('CreateUserInput'));

describe('every writable field of a user is kept, on every write path', () => {
  it('REST POST /api/v1/users (sign-up)', async () => {
    const written = valuesFor('CreateUserInput', createUserFields());
    const response = await suite.app.inject({ method: 'POST', url: '/api/v1/users', payload: written });
    expect(response.statusCode).toBe(201);
    await expectKept(response.json().data.id, written, 'POST /users');
  });

  it('REST PUT /api/v1/users/{id} (full replacement)', async () => {
    const written = valuesFor('ReplaceUserInput', Object.keys(fieldsOf('ReplaceUserInput')));
    const response = await adminWrite('PUT', `/api/v1/users/${suite.bob.id}`, written);
    expect(response.statusCode).toBe(200);
    await expectKept(suite.bob.id, written, 'PUT /users/{id}');
  });

  it('REST PATCH /api/v1/users/{id}, one field at a time', async () => {
    for (const field of Object.keys(fieldsOf('UpdateUserInput'))) {
      const written = valuesFor('UpdateUserInput', [field]);
      const response = await adminWrite('PATCH', `/api/v1/users/${suite.bob.id}`, written);
      expect({ field, status: response.statusCode }).toEqual({ field, status: 200 });
      await expectKept(suite.bob.id, written, `PATCH /users/{id} ${field}`);
    }
  });

  it('REST POST /api/v1/users/batch', async () => {
    const users = [valuesFor('CreateUserInput', createUserFields()), valuesFor('CreateUserInput', createUserFields())];
    const response = await adminWrite('POST', '/api/v1/users/batch', { users });
    expect(response.statusCode).toBe(201);
    const created = response.json().data.items as { id: number }[];
    for (const [index, user] of created.entries()) await expectKept(user.id, users[index]!, 'POST /users/batch');
  });

  it('REST PATCH /api/v1/users (bulk), on one user so that an e-mail may be set', async () => {
    const target = (await adminWrite('POST', '/api/v1/users', valuesFor('CreateUserInput', ['name', 'email']))).json().data.id as number;
    const data = valuesFor('UpdateUserInput', Object.keys(fieldsOf('UpdateUserInput')));
    const response = await adminWrite('PATCH', '/api/v1/users', { ids: [target], data });
    expect(response.json()).toMatchObject({ data: { updated: 1 } });
    await expectKept(target, data, 'PATCH /users (bulk)');
  });

  it('GraphQL createUser, every field of CreateUserInput', async () => {
    const written = valuesFor('CreateUserInput', sdlFields('CreateUserInput'));
    const result = await graphql<{ createUser: { id: string } }>(
      suite.app,
      'mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }',
      {
        input: written,
      },
    );
    expect(result.errors).toBeUndefined();
    await expectKept(Number(result.data!.createUser.id), written, 'GraphQL createUser');
  });

  it('GraphQL updateUser, every field of UpdateUserInput', async () => {
    const written = valuesFor('UpdateUserInput', sdlFields('UpdateUserInput'));
    const result = await graphql(
      suite.app,
      'mutation ($id: ID!, $input: UpdateUserInput!) { updateUser(id: $id, input: $input) { id } }',
      { id: String(suite.alice.id), input: written },
      suite.admin.headers,
    );
    expect(result.errors).toBeUndefined();
    await expectKept(suite.alice.id, written, 'GraphQL updateUser');
  });
});

describe('every writable field of the other resources is kept', () => {
  it('a post: REST POST /api/v1/users/{id}/posts and GraphQL createPost, read back through both doors', async () => {
    const fields = Object.keys(fieldsOf('CreatePostInput'));
    const viaRest = valuesFor('CreatePostInput', fields);
    const created = await adminWrite('POST', `/api/v1/users/${suite.alice.id}/posts`, viaRest);
    expect(created.statusCode).toBe(201);
    const viaGraphql = valuesFor('CreatePostInput', fields);
    const result = await graphql<{ createPost: { id: string } }>(
      suite.app,
      `mutation ($authorId: ID!, ${fields.map((field) => `$${field}: String!`).join(', ')}) { createPost(authorId: $authorId, ${fields.map((field) => `${field}: $${field}`).join(', ')}) { id } }`,
      { authorId: String(suite.alice.id), ...viaGraphql },
      suite.admin.headers,
    );
    expect(result.errors).toBeUndefined();
    for (const [id, written] of [
      [created.json().data.id as number, viaRest],
      [Number(result.data!.createPost.id), viaGraphql],
    ] as const) {
      const rest = (await suite.app.inject({ method: 'GET', url: `/api/v1/posts/${id}` })).json().data;
      const read = await graphql<{ post: Record<string, unknown> }>(suite.app, `{ post(id: "${id}") { ${fields.join(' ')} } }`);
      for (const [field, value] of Object.entries(written)) {
        expect({ field, door: 'REST', read: rest[field] }).toEqual({ field, door: 'REST', read: value });
        expect({ field, door: 'GraphQL', read: read.data?.post?.[field] }).toEqual({ field, door: 'GraphQL', read: value });
      }
    }
  });

  it.each([
    ['a comment', 'CreateCommentInput', async () => `/api/v1/posts/${await firstPostId()}/comments`, (id: number) => `/api/v1/comments/${id}`],
    [
      'an order',
      'CreateOrderInput',
      async () => `/api/v1/users/${suite.alice.id}/orders`,
      (id: number) => `/api/v1/users/${suite.alice.id}/orders/${id}`,
    ],
  ] as const)('%s: REST %s, read back', async (_what, schemaName, collection, item) => {
    const written = valuesFor(schemaName, Object.keys(fieldsOf(schemaName)));
    const created = await suite.app.inject({ method: 'POST', url: await collection(), headers: suite.alice.headers, payload: written });
    expect(created.statusCode).toBe(201);
    const read = (await suite.app.inject({ method: 'GET', url: item(created.json().data.id), headers: suite.alice.headers })).json().data;
    for (const [field, value] of Object.entries(written)) expect({ field, read: read[field] }).toEqual({ field, read: value });
  });
});

async function firstPostId(): Promise<number> {
  const post = await suite.app.db.prisma.post.findFirstOrThrow({ select: { id: true } });
  return post.id;
}
