// Breaking-change detection: GraphQL and OpenAPI rules on small fixtures, and the git-based check.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from '@jest/globals';
import { parse, stringify } from 'yaml';
import {
  checkBreakingAgainst,
  defaultBaseRev,
  graphqlBreakingChanges,
  openapiBreakingChanges,
} from '../contracts/breaking.js';

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
    expect(changes).toEqual([{ contract: 'graphql', message: "Field 'bio' was removed from object type 'User'", path: 'User.bio' }]);
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
    const changes = await openapiBreakingChanges(baseDoc, editDoc((d) => delete d.paths['/users/{id}'].delete));
    expect(changes).toEqual([{
      contract: 'openapi',
      message: 'DELETE /users/{id}: cannot remove an operation. This is a breaking change.',
      path: '/paths/~1users~1{id}/delete',
    }]);
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
    const changes = await openapiBreakingChanges(baseDoc, editDoc((d) => d.components.schemas.UserInput.required.push('bio')));
    expect(changes).toEqual([
      {
        contract: 'openapi',
        message: expect.stringContaining('cannot make a request property required'),
        path: '/paths/~1users/post/requestBody/content/application~1json/schema/properties/bio',
      },
    ]);
  });

  test('narrowing a 3.1 type array (dropping null) on a request property is breaking', async () => {
    const changes = await openapiBreakingChanges(baseDoc, editDoc((d) => (d.components.schemas.UserInput.properties.bio.type = 'string')));
    expect(changes.map((c) => c.path)).toEqual(['/paths/~1users/post/requestBody/content/application~1json/schema/properties/bio']);
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
      execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false', ...args], { cwd: dir, stdio: 'pipe' });
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
    writeFileSync(path.join(dir, 'openapi/openapi.yaml'), editDoc((d) => delete d.paths['/users/{id}'].delete));

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
