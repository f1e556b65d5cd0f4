// Consumer: Relay (issue 33, SPEC §2 Node), unmodified: relay-compiler 21 compiles a refetchable User fragment and a
// `node` query against schema.graphql with `nodeInterfaceIdField: "nodeId"`, and relay-runtime runs them against the real
// server; its normalized store keeps a user and a post of the same row id apart (they once merged into one record).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../../src/paths.js';
import { createAccount, type Account } from '../support/accounts.js';
import { createTestApp } from '../support/app.js';
import { run } from '../support/consumer-project.js';

type Relay = typeof import('relay-runtime');

let app: FastifyInstance;
let base: string;
let alice: Account;
const workDir = mkdtempSync(path.join(os.tmpdir(), 'users-posts-relay-'));
const requireHere = createRequire(path.join(repoRoot, 'apps/api/package.json'));

beforeAll(async () => {
  app = await createTestApp();
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  alice = await createAccount(app, 'alice@example.com');
  // A post whose row id is alice's: the collision Relay's store must not merge.
  await app.db.prisma.post.create({ data: { id: alice.id, title: 'same row id', content: 'c', authorId: alice.id } });
  // The Relay project: the contract's SDL, the app's documents, and the configuration the README gives.
  mkdirSync(path.join(workDir, 'src'));
  copyFileSync(path.join(repoRoot, 'schema/schema.graphql'), path.join(workDir, 'schema.graphql'));
  copyFileSync(path.join(repoRoot, 'apps/api/test/consumers/fixtures/relay/app.js'), path.join(workDir, 'src/app.js'));
  writeFileSync(
    path.join(workDir, 'relay.config.json'),
    JSON.stringify({
      src: './src',
      schema: './schema.graphql',
      language: 'javascript',
      eagerEsModules: false,
      schemaConfig: { nodeInterfaceIdField: 'nodeId', nodeInterfaceIdVariableName: 'nodeId' },
    }),
  );
  await run(process.execPath, [requireHere.resolve('relay-compiler/cli.js')], { cwd: workDir });
}, 120_000);
afterAll(async () => {
  await app?.close();
  rmSync(workDir, { recursive: true, force: true });
});

/** A Relay environment on the server, keyed by `nodeId` (the store's record ids) as the configuration says. */
function environment(relay: Relay) {
  const network = relay.Network.create(async (operation, variables) => {
    const response = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query: operation.text, variables }),
    });
    return (await response.json()) as never;
  });
  const getDataID = (field: Record<string, unknown>, typeName: string) => (field.nodeId as string | undefined) ?? `${typeName}:${String(field.id)}`;
  return new relay.Environment({ network, store: new relay.Store(new relay.RecordSource()), getDataID });
}

const artifact = (name: string) => requireHere(path.join(workDir, 'src/__generated__', `${name}.graphql.js`));

describe('Relay 21 (relay-compiler + relay-runtime)', () => {
  it('compiles @refetchable on a User fragment into a node(nodeId:) query and refetches the user by it', async () => {
    const relay = requireHere('relay-runtime') as Relay;
    const refetch = artifact('UserCardRefetchQuery');
    expect(refetch.params.text).toContain('node(nodeId: $nodeId)');
    const ids = (await (
      await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `{ user(id: "${alice.id}") { nodeId } post(id: "${alice.id}") { nodeId } }` }),
      })
    ).json()) as { data: { user: { nodeId: string }; post: { nodeId: string } } };
    const env = environment(relay);
    await relay.fetchQuery(env, refetch, { nodeId: ids.data.user.nodeId }).toPromise();
    const source = env.getStore().getSource();
    const user = source.get(ids.data.user.nodeId);
    expect(user).toMatchObject({ __typename: 'User', name: 'alice', nodeId: ids.data.user.nodeId });
  });

  it('keeps a user and a post of the same row id as two records of its normalized store', async () => {
    const relay = requireHere('relay-runtime') as Relay;
    const env = environment(relay);
    await relay.fetchQuery(env, artifact('AppPostsQuery'), {}).toPromise();
    const records = env.getStore().getSource();
    const byType = (type: string) =>
      records
        .getRecordIDs()
        .map((id) => records.get(id))
        .filter((record) => record?.__typename === type && String(record.id) === String(alice.id));
    const [post] = byType('Post');
    const [user] = byType('User');
    expect(post).toMatchObject({ title: 'same row id' });
    expect(user).toMatchObject({ name: 'alice' });
    expect(post!.__id).not.toBe(user!.__id);
    expect(typeof post!.createdAt).toBe('string'); // the post's own field, not the user's merged in
  });
});
