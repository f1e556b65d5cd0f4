// No field a green pipeline can silently drop (issues 29 and 39): every write of a stored model the contracts have (each
// REST operation under the resource prefix that takes a body, each GraphQL mutation) and each entry outside them that
// creates users (the OpenID first login, the ADMIN from the environment) writes a valid value of every field it takes,
// drawn from the field's own schema, and reads it back through both doors. The writes are enumerated from the contracts
// (support/write-operations.ts), not listed: a write with no exerciser below fails, named, and so does an exerciser of a
// write that is gone. The fields are read from the contracts too, so a field added to an input is walked without an edit.
import { describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { buildSchema, getNamedType, isInputObjectType, isObjectType, type GraphQLSchema } from 'graphql';
import { readFileSync } from 'node:fs';
import { graphqlSchemaPath } from '../../src/paths.js';
import { createTestApp, useTestApp } from '../support/app.js';
import { bearer } from '../support/auth.js';
import { fieldsOf, validValue } from '../support/contract-values.js';
import { graphql } from '../support/graphql.js';
import { LocalOidcProvider } from '../support/oidc.js';
import { modelWrites, uncoveredAndVanished } from '../support/write-operations.js';

const suite = useTestApp({ rateLimits: { signup: { max: 100_000, windowMs: 3_600_000 } } });
const sdl: GraphQLSchema = buildSchema(readFileSync(graphqlSchemaPath, 'utf8'));

/** The fields of an SDL object or input type. */
function sdlFields(typeName: string): string[] {
  const type = sdl.getType(typeName);
  if (!isObjectType(type) && !isInputObjectType(type)) throw new Error(`${typeName} is not an object or input type`);
  return Object.keys(type.getFields());
}

/** The scalar and enum fields of an SDL object type, as selected in a read-back. */
const readableFields = (typeName: string) => {
  const type = sdl.getType(typeName);
  if (!isObjectType(type)) throw new Error(`${typeName} is not an object type`);
  return Object.values(type.getFields())
    .filter((field) => !isObjectType(getNamedType(field.type)))
    .map((field) => field.name);
};

/** A valid value for each field of a contract input, drawn from the OpenAPI schema of the same name. */
function valuesFor(schemaName: string, fields: readonly string[] = Object.keys(fieldsOf(schemaName))): Record<string, unknown> {
  const schemas = fieldsOf(schemaName);
  return Object.fromEntries(
    fields.map((field) => {
      const schema = schemas[field];
      if (!schema) throw new Error(`${schemaName}.${field} is in schema.graphql's input but not in openapi.yaml's ${schemaName}`);
      return [field, validValue(field, schema)];
    }),
  );
}

/** Who reads a user back: an app and a caller who may see every field of that user (an ADMIN, or the user itself). */
interface Reader {
  app: FastifyInstance;
  headers: Record<string, string>;
}

const asAdmin = (): Reader => ({ app: suite.app, headers: suite.admin.headers });

/** Reads the user back through both doors and checks each written field (a password: by logging in with it). */
async function expectUserKept(reader: Reader, id: number, written: Record<string, unknown>, path: string): Promise<void> {
  const { app, headers } = reader;
  const rest = (await app.inject({ method: 'GET', url: `/api/v1/users/${id}`, headers })).json().data;
  const viaGraphql = await graphql<{ user: Record<string, unknown> }>(
    app,
    `query ($id: ID!) { user(id: $id) { ${readableFields('User').join(' ')} } }`,
    { id: String(id) },
    headers,
  );
  for (const [field, value] of Object.entries(written)) {
    if (field === 'password') {
      // Write-only: kept when it logs in.
      const login = await app.inject({ method: 'POST', url: '/login', payload: { email: rest.email, password: value } });
      expect({ path, field, kept: login.statusCode === 200 }).toEqual({ path, field, kept: true });
      continue;
    }
    expect({ path, field, door: 'REST', read: rest[field] }).toEqual({ path, field, door: 'REST', read: value });
    expect({ path, field, door: 'GraphQL', read: viaGraphql.data?.user?.[field] }).toEqual({ path, field, door: 'GraphQL', read: value });
  }
}

/** Reads a post back through both doors. */
async function expectPostKept(id: number, written: Record<string, unknown>, path: string): Promise<void> {
  const rest = (await suite.app.inject({ method: 'GET', url: `/api/v1/posts/${id}` })).json().data;
  const read = await graphql<{ post: Record<string, unknown> }>(suite.app, `{ post(id: "${id}") { ${readableFields('Post').join(' ')} } }`);
  for (const [field, value] of Object.entries(written)) {
    expect({ path, field, door: 'REST', read: rest[field] }).toEqual({ path, field, door: 'REST', read: value });
    expect({ path, field, door: 'GraphQL', read: read.data?.post?.[field] }).toEqual({ path, field, door: 'GraphQL', read: value });
  }
}

/** Reads a resource GraphQL does not have (comments, orders, API keys) back through REST. */
function expectKeptInRest(read: Record<string, unknown> | undefined, written: Record<string, unknown>, path: string): void {
  for (const [field, value] of Object.entries(written)) expect({ path, field, read: read?.[field] }).toEqual({ path, field, read: value });
}

const adminWrite = (method: 'PUT' | 'PATCH' | 'POST', url: string, payload: unknown) =>
  suite.app.inject({ method, url, headers: suite.admin.headers, payload: payload as object });

/** The `userId` claim of an access token: whom a login outside the API's writes (OpenID, the bootstrap) made. */
const userIdOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { userId: number }).userId;

async function firstPostId(): Promise<number> {
  return (await suite.app.db.prisma.post.findFirstOrThrow({ select: { id: true } })).id;
}

async function newOrderOfAlice(): Promise<number> {
  const created = await suite.app.inject({
    method: 'POST',
    url: `/api/v1/users/${suite.alice.id}/orders`,
    headers: suite.alice.headers,
    payload: valuesFor('CreateOrderInput'),
  });
  expect(created.statusCode).toBe(201);
  return created.json().data.id as number;
}

let subjects = 0;

/** The exerciser of each write, keyed as support/write-operations.ts enumerates them: it writes, then reads back. */
const exercisers: Record<string, () => Promise<void>> = {
  'REST createUser': async () => {
    const written = valuesFor('CreateUserInput');
    const response = await suite.app.inject({ method: 'POST', url: '/api/v1/users', payload: written });
    expect(response.statusCode).toBe(201);
    await expectUserKept(asAdmin(), response.json().data.id, written, 'POST /users');
  },

  'REST replaceUser': async () => {
    const written = valuesFor('ReplaceUserInput');
    const response = await adminWrite('PUT', `/api/v1/users/${suite.bob.id}`, written);
    expect(response.statusCode).toBe(200);
    await expectUserKept(asAdmin(), suite.bob.id, written, 'PUT /users/{id}');
  },

  'REST updateUser': async () => {
    for (const field of Object.keys(fieldsOf('UpdateUserInput'))) {
      const written = valuesFor('UpdateUserInput', [field]);
      const response = await adminWrite('PATCH', `/api/v1/users/${suite.bob.id}`, written);
      expect({ field, status: response.statusCode }).toEqual({ field, status: 200 });
      await expectUserKept(asAdmin(), suite.bob.id, written, `PATCH /users/{id} ${field}`);
    }
  },

  'REST batchCreateUsers': async () => {
    const users = [valuesFor('CreateUserInput'), valuesFor('CreateUserInput')];
    const response = await adminWrite('POST', '/api/v1/users/batch', { users });
    expect(response.statusCode).toBe(201);
    const created = response.json().data.items as { id: number }[];
    for (const [index, user] of created.entries()) await expectUserKept(asAdmin(), user.id, users[index]!, 'POST /users/batch');
  },

  'REST bulkUpdateUsers': async () => {
    // On one user, so that an e-mail may be set.
    const target = (await adminWrite('POST', '/api/v1/users', valuesFor('CreateUserInput', ['name', 'email']))).json().data.id as number;
    const data = valuesFor('UpdateUserInput');
    const response = await adminWrite('PATCH', '/api/v1/users', { ids: [target], data });
    expect(response.json()).toMatchObject({ data: { updated: 1 } });
    await expectUserKept(asAdmin(), target, data, 'PATCH /users (bulk)');
  },

  'REST createUserPost': async () => {
    const written = valuesFor('CreatePostInput');
    const created = await adminWrite('POST', `/api/v1/users/${suite.alice.id}/posts`, written);
    expect(created.statusCode).toBe(201);
    await expectPostKept(created.json().data.id, written, 'POST /users/{id}/posts');
  },

  'REST createPostComment': async () => {
    const written = valuesFor('CreateCommentInput');
    const created = await suite.app.inject({
      method: 'POST',
      url: `/api/v1/posts/${await firstPostId()}/comments`,
      headers: suite.alice.headers,
      payload: written,
    });
    expect(created.statusCode).toBe(201);
    const read = await suite.app.inject({ method: 'GET', url: `/api/v1/comments/${created.json().data.id}` });
    expectKeptInRest(read.json().data, written, 'POST /posts/{id}/comments');
  },

  'REST createUserOrder': async () => {
    const written = valuesFor('CreateOrderInput');
    const created = await suite.app.inject({
      method: 'POST',
      url: `/api/v1/users/${suite.alice.id}/orders`,
      headers: suite.alice.headers,
      payload: written,
    });
    expect(created.statusCode).toBe(201);
    const read = await suite.app.inject({
      method: 'GET',
      url: `/api/v1/users/${suite.alice.id}/orders/${created.json().data.id}`,
      headers: suite.alice.headers,
    });
    expectKeptInRest(read.json().data, written, 'POST /users/{id}/orders');
  },

  'REST updateUserOrder': async () => {
    const orderId = await newOrderOfAlice();
    const written = valuesFor('UpdateOrderInput'); // a status other than `pending`, which an ADMIN may set
    const response = await adminWrite('PATCH', `/api/v1/users/${suite.alice.id}/orders/${orderId}`, written);
    expect(response.statusCode).toBe(200);
    const read = await suite.app.inject({ method: 'GET', url: `/api/v1/users/${suite.alice.id}/orders/${orderId}`, headers: suite.alice.headers });
    expectKeptInRest(read.json().data, written, 'PATCH /users/{id}/orders/{orderId}');
  },

  'REST createApiKey': async () => {
    const written = valuesFor('CreateApiKeyInput');
    const created = await suite.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: suite.alice.headers, payload: written });
    expect(created.statusCode).toBe(201);
    const list = (await suite.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: suite.alice.headers })).json().data.items as {
      id: number;
    }[];
    expectKeptInRest(
      list.find((key) => key.id === created.json().data.id),
      written,
      'POST /api-keys',
    );
  },

  'GraphQL createUser': async () => {
    const written = valuesFor('CreateUserInput', sdlFields('CreateUserInput'));
    const result = await graphql<{ createUser: { id: string } }>(
      suite.app,
      'mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }',
      {
        input: written,
      },
    );
    expect(result.errors).toBeUndefined();
    await expectUserKept(asAdmin(), Number(result.data!.createUser.id), written, 'GraphQL createUser');
  },

  'GraphQL updateUser': async () => {
    const written = valuesFor('UpdateUserInput', sdlFields('UpdateUserInput'));
    const result = await graphql(
      suite.app,
      'mutation ($id: ID!, $input: UpdateUserInput!) { updateUser(id: $id, input: $input) { id } }',
      { id: String(suite.alice.id), input: written },
      suite.admin.headers,
    );
    expect(result.errors).toBeUndefined();
    await expectUserKept(asAdmin(), suite.alice.id, written, 'GraphQL updateUser');
  },

  'GraphQL createPost': async () => {
    // The mutation's arguments are CreatePostInput's fields, each a String!, beside the author.
    const fields = Object.keys(fieldsOf('CreatePostInput'));
    const written = valuesFor('CreatePostInput', fields);
    const result = await graphql<{ createPost: { id: string } }>(
      suite.app,
      `mutation ($authorId: ID!, ${fields.map((field) => `$${field}: String!`).join(', ')}) { createPost(authorId: $authorId, ${fields.map((field) => `${field}: $${field}`).join(', ')}) { id } }`,
      { authorId: String(suite.alice.id), ...written },
      suite.admin.headers,
    );
    expect(result.errors).toBeUndefined();
    await expectPostKept(Number(result.data!.createPost.id), written, 'GraphQL createPost');
  },

  'GraphQL deleteUser': async () => {
    // What a deletion writes is the user's absence: kept when neither door finds it any more.
    const id = (await adminWrite('POST', '/api/v1/users', valuesFor('CreateUserInput', ['name', 'email']))).json().data.id as number;
    const result = await graphql(suite.app, 'mutation ($id: ID!) { deleteUser(id: $id) }', { id: String(id) }, suite.admin.headers);
    expect(result.data).toEqual({ deleteUser: true });
    expect((await suite.app.inject({ method: 'GET', url: `/api/v1/users/${id}`, headers: suite.admin.headers })).statusCode).toBe(404);
    expect((await graphql(suite.app, `{ user(id: "${id}") { id } }`, {}, suite.admin.headers)).data).toEqual({ user: null });
  },

  'entry OIDC first login': async () => {
    // The provider asserts a sign-up's fields (name, verified e-mail) as claims; the new user must keep them as REST's
    // sign-up would. Read back by the user itself, with the token the login answered.
    const provider = await LocalOidcProvider.start();
    const app = await createTestApp({ oauthProviders: [provider.providerConfig('local')] });
    try {
      const written = valuesFor('CreateUserInput', ['name', 'email']);
      provider.claims = { sub: `round-trip-${++subjects}`, email: written.email, email_verified: true, name: written.name };
      const started = await app.inject({ method: 'GET', url: '/auth/oauth/local/authorize' });
      expect(started.statusCode).toBe(302);
      const transaction = started.cookies.find((cookie) => cookie.name === 'oauth_tx')!.value;
      const redirect = await provider.authorize(started.headers.location as string);
      const callback = await app.inject({ method: 'GET', url: `${redirect.pathname}${redirect.search}`, cookies: { oauth_tx: transaction } });
      expect(callback.statusCode).toBe(200);
      const token = callback.json().accessToken as string;
      await expectUserKept({ app, headers: bearer(token) }, userIdOf(token), written, 'OIDC first login');
    } finally {
      await app.close();
      await provider.stop();
    }
  },

  'entry ADMIN bootstrap': async () => {
    // ADMIN_EMAIL and ADMIN_PASSWORD carry a sign-up's e-mail and password: kept, and the user an ADMIN.
    const written = valuesFor('CreateUserInput', ['email', 'password']);
    const app = await createTestApp({ admin: { email: written.email as string, password: written.password as string } });
    try {
      await app.ready();
      const login = await app.inject({ method: 'POST', url: '/login', payload: { email: written.email, password: written.password } });
      expect(login.statusCode).toBe(200);
      const token = login.json().accessToken as string;
      await expectUserKept({ app, headers: bearer(token) }, userIdOf(token), { ...written, role: 'ADMIN' }, 'ADMIN bootstrap');
    } finally {
      await app.close();
    }
  },
};

describe('every writable field is kept, on every write the contracts have (enumerated from them)', () => {
  it('the table exercises no write the contracts no longer have', () => {
    expect(uncoveredAndVanished(Object.keys(exercisers)).vanished).toEqual([]);
  });

  it.each(modelWrites())('$label', async ({ key, label }) => {
    const exercise = exercisers[key];
    if (!exercise) throw new Error(`${label} writes a stored model and nothing here exercises it: add '${key}' to the exercisers`);
    await exercise();
  });
});
