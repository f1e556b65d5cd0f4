// The contract/Prisma storage check (scripts/contracts/storage.ts) on small contract fixtures edited per test.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from '@jest/globals';
import { parseYaml, stringifyYaml as stringify } from '../contracts/yaml.js';
import {
  graphqlStorageProblems,
  modelOfInput,
  openapiStorageProblems,
  prismaModels,
  type PrismaModels,
  type ServerTables,
} from '../contracts/storage.js';

// The fixtures are edited freely as plain objects.
const parse = (text: string): any => parseYaml(text);

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/storage');
const read = (file: string) => readFileSync(path.join(fixtures, file), 'utf8');
const [baseSdl, baseDoc, basePrisma] = [read('schema.graphql'), read('openapi.yaml'), read('schema.prisma')];

/** The server's side as apps/api declares it for these shapes: a hashed password, a computed verification flag. */
const server: ServerTables = {
  storedByHand: { User: ['password'] },
  computedFields: { User: ['emailVerified'] },
  resolvers: { User: { emailVerified: () => true, createdAt: () => '' }, Post: { author: () => null } },
};

/** Replaces one exact occurrence (failing loudly if the fixture changed). */
function edit(text: string, from: string, to: string): string {
  expect(text.split(from)).toHaveLength(2);
  return text.replace(from, to);
}
const editDoc = (change: (doc: any) => void) => {
  const doc = parse(baseDoc);
  change(doc);
  return stringify(doc);
};
const withPrismaBio = () => prismaModels(edit(basePrisma, '  name            String\n', '  name            String\n  bio             String?\n'));

const graphql = async (sdl: string, models?: PrismaModels, tables: ServerTables = server) =>
  graphqlStorageProblems(sdl, models ?? (await prismaModels(basePrisma)), tables);
const openapi = async (doc: string, models?: PrismaModels, tables: ServerTables = server) =>
  openapiStorageProblems(parse(doc), models ?? (await prismaModels(basePrisma)), tables);

describe('GraphQL against the Prisma model', () => {
  test('the fixture contracts are stored or resolved', async () => {
    expect(await graphql(baseSdl)).toEqual([]);
  });

  test('a field added to an object type fails until the model has it (issue 29: `bio` accepted and dropped)', async () => {
    const sdl = edit(
      baseSdl,
      '  name: String!\n  email: String!\n  emailVerified',
      '  name: String!\n  bio: String\n  email: String!\n  emailVerified',
    );
    expect(await graphql(sdl)).toEqual([
      "User.bio: schema/schema.graphql declares it, but prisma/schema.prisma's model User has no field bio and the server has no " +
        'User.bio resolver (apps/api/src/graphql/schema/resolvers)',
    ]);
    expect(await graphql(sdl, await withPrismaBio())).toEqual([]);
    expect(
      await graphql(sdl, undefined, { ...server, resolvers: { ...server.resolvers, User: { ...server.resolvers.User, bio: () => '' } } }),
    ).toEqual([]);
  });

  test('a field the server resolves passes only while the resolver map has it', async () => {
    expect(await graphql(baseSdl, undefined, { ...server, resolvers: { Post: { author: () => null } } })).toEqual([
      expect.stringMatching(/^User\.emailVerified: .* has no field emailVerified and the server has no User\.emailVerified resolver/),
    ]);
  });

  test('an input field fails unless it is a column of the model it writes or stored by hand', async () => {
    const sdl = edit(baseSdl, 'input UpdateUserInput {\n', 'input UpdateUserInput {\n  bio: String\n  posts: [ID!]\n');
    expect(await graphql(sdl)).toEqual([
      "UpdateUserInput.bio: schema/schema.graphql declares it, but prisma/schema.prisma's model User has no field bio and " +
        "apps/api/src/services/storage-mapping.ts's STORED_BY_HAND.User does not list bio",
      // A relation is not stored by its name: it is written through its foreign key, by hand.
      expect.stringContaining(
        "UpdateUserInput.posts: schema/schema.graphql declares it, but prisma/schema.prisma's model User has no column (only a relation) named posts",
      ),
    ]);
    expect(await graphql(baseSdl, undefined, { ...server, storedByHand: {} })).toEqual([
      expect.stringMatching(/^CreateUserInput\.password: .*STORED_BY_HAND\.User does not list password$/),
    ]);
  });
});

describe('OpenAPI against the Prisma model', () => {
  test('the fixture contracts are stored or computed', async () => {
    expect(await openapi(baseDoc)).toEqual([]);
  });

  test('a property added to a representation fails, for the item schema too, until the model has it or the server computes it', async () => {
    const doc = editDoc((d) => (d.components.schemas.User.properties.bio = { type: ['string', 'null'] }));
    const expected = (schema: string) =>
      `${schema}.bio: openapi/openapi.yaml declares it, but prisma/schema.prisma's model User has no field bio and ` +
      "apps/api/src/services/storage-mapping.ts's COMPUTED_FIELDS.User does not list bio";
    expect(await openapi(doc)).toEqual([expected('User'), expected('UserItem')]);
    expect(await openapi(doc, await withPrismaBio())).toEqual([]);
    expect(await openapi(doc, undefined, { ...server, computedFields: { User: ['emailVerified', 'bio'] } })).toEqual([]);
  });

  test('a request-body property fails unless stored under its name or by hand; schemas that write no model are not compared', async () => {
    const doc = editDoc((d) => (d.components.schemas.ReplaceUserInput.properties.bio = { type: 'string' }));
    expect(await openapi(doc)).toEqual([
      "ReplaceUserInput.bio: openapi/openapi.yaml declares it, but prisma/schema.prisma's model User has no field bio and " +
        "apps/api/src/services/storage-mapping.ts's STORED_BY_HAND.User does not list bio",
    ]);
    expect(await openapi(doc, await withPrismaBio())).toEqual([]);
    expect(await openapi(baseDoc, undefined, { ...server, storedByHand: {} })).toEqual([
      expect.stringMatching(/^CreateUserInput\.password: .*STORED_BY_HAND\.User does not list password$/),
    ]);
  });
});

test('an input names the model it writes as <Model>Input or <Verb><Model>Input', async () => {
  const models = await prismaModels(`${basePrisma}\nmodel ApiKey {\n  id Int @id\n}\n`);
  const names = [
    'CreateUserInput',
    'UserInput',
    'ReplaceUserInput',
    'CreateApiKeyInput',
    'BatchCreateUsersInput',
    'LoginInput',
    'CreateSuperUserInput',
  ];
  expect(names.map((name) => modelOfInput(name, models))).toEqual(['User', 'User', 'User', 'ApiKey', undefined, undefined, undefined]);
});

test('a column not named snake_case(field) is reported: the SQL reads find columns by that rule', async () => {
  const models = await prismaModels(
    edit(basePrisma, '  name            String\n', '  name            String\n  nickName        String? @map("nick")\n'),
  );
  expect(models.get('User')!.offConvention).toEqual(['nickName (column nick)']);
});

test('a Prisma schema that does not parse is reported naming the file', async () => {
  await expect(prismaModels('model User {\n  id Int @id\n  name Strin\n}\n')).rejects.toThrow(/prisma\/schema\.prisma does not parse/);
});
