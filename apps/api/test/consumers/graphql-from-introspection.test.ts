// Consumer: GraphQL documents typed by GraphQL Code Generator's client preset (@graphql-codegen/client-preset, the
// generator most TypeScript GraphQL clients start from) straight from the running server's introspection, compiled
// with `tsc --strict`, and sent by @urql/core: sign-up, an auth refusal read from `extensions.code`, login, a write,
// a cursor walk over postsConnection and an absent user, all through the generated types.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../../src/paths.js';
import { createTestApp } from '../support/app.js';
import { compileStrict, run } from '../support/consumer-project.js';
import { seedUsersWithPosts } from '../support/fixtures.js';

let app: FastifyInstance;
let base: string;
const workDir = mkdtempSync(path.join(os.tmpdir(), 'users-posts-gql-'));

beforeAll(async () => {
  app = await createTestApp();
  await seedUsersWithPosts(app.db.prisma, 3, 2);
  base = await app.listen({ port: 0, host: '127.0.0.1' });
}, 60_000);
afterAll(async () => {
  await app?.close();
  rmSync(workDir, { recursive: true, force: true });
});

describe('documents typed from introspection by GraphQL Code Generator, sent by @urql/core', () => {
  it('generate, compile under tsc --strict, and walk sign-up → refusal → login → write → cursor pages → absent user', async () => {
    copyFileSync(path.join(repoRoot, 'apps/api/test/consumers/fixtures/graphql-walk.ts'), path.join(workDir, 'graphql-walk.ts'));
    // The consumer's dependencies (@urql/core, graphql, @graphql-typed-document-node/core) as a project would install them.
    symlinkSync(path.join(repoRoot, 'apps/api/node_modules'), path.join(workDir, 'node_modules'), 'dir');
    await run(
      process.execPath,
      [
        path.join(repoRoot, 'scripts/consumers/generate-graphql-client.mjs'),
        `${base}/graphql`,
        path.join(workDir, 'graphql-walk.ts'),
        path.join(workDir, 'gql'),
      ],
      {
        cwd: repoRoot,
      },
    );

    await compileStrict(workDir, ['graphql-walk.ts', 'gql/**/*.ts'], 'the generated documents');

    const { stdout } = await run(process.execPath, [path.join(workDir, 'out/graphql-walk.js'), base], { cwd: workDir });
    const walk = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(walk.user).toEqual({ id: expect.stringMatching(/^\d+$/), role: 'USER', email: expect.stringMatching(/^gql-walk-/) });
    expect(walk.refusedCode).toBe('UNAUTHENTICATED');
    expect(walk.me).toBe(walk.user.email);
    expect(walk.post.authorName).toBe('GraphQL Walker');
    // every post once, the new one included, over pages of two
    const stored = await app.db.prisma.post.findMany({ select: { title: true } });
    expect([...walk.titles].sort()).toEqual(stored.map((post) => post.title).sort());
    expect(walk.titles).toContain('From introspection');
    expect(walk.missing).toBe('absent');
    expect(await app.db.prisma.post.count({ where: { id: Number(walk.post.id), authorId: Number(walk.user.id) } })).toBe(1);
  }, 120_000);
});
