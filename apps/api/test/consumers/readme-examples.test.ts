// The README's TypeScript example, as written: its ```ts block is saved as the file it names (subscribe.mts) and run
// with tsx against the real server, BASE pointing at it, as a reader would (the ```sh examples run in scripts/tour.sh).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../src/paths.js';
import { createAccount, type Account } from '../support/accounts.js';
import { createTestApp } from '../support/app.js';
import { listen, watchSubscribers } from '../support/ws.js';

/** The README's ```ts blocks, in order. */
function typescriptExamples(): string[] {
  const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  return [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

let app: FastifyInstance;
let base: string;
let alice: Account;
let subscribers: ReturnType<typeof watchSubscribers>;
// Beside apps/api's own dependencies (graphql-ws, ws), where an `npm i graphql-ws ws tsx` would have put them.
const file = path.join(repoRoot, 'apps/api/test/consumers/fixtures', `readme-subscribe-${process.pid}.mts`);

beforeAll(async () => {
  app = await createTestApp();
  subscribers = watchSubscribers(app);
  base = (await listen(app)).http;
  alice = await createAccount(app, 'alice@example.com');
}, 60_000);
afterAll(async () => {
  rmSync(file, { force: true });
  await app?.close();
});

describe("the README's TypeScript example", () => {
  it('subscribe.mts: subscribes over the WebSocket at BASE and prints the post created meanwhile', async () => {
    const [example] = typescriptExamples();
    expect(example).toMatch(/^\/\/ subscribe\.mts:/);
    writeFileSync(file, example!);
    // As the README says to run it: `npx tsx subscribe.mts`, here `node --import tsx` (tsx from the workspace).
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      cwd: path.dirname(file),
      env: { ...process.env, BASE: base, ACCESS: alice.token },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const printed = new Promise<void>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
        if (output.includes('from the README example')) resolve();
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      child.once('exit', (code) => reject(new Error(`the example exited (${code}) before printing the post:\n${output}`)));
    });
    printed.catch(() => undefined);
    try {
      // Once its subscription listens on the server (a bound only for a hang: a busy machine starts tsx slowly); an
      // example that ends first (it could not connect, it threw) fails here at once, with what it printed.
      await Promise.race([subscribers.until(1, 50_000), printed]);
      const created = await app.inject({
        method: 'POST',
        url: `/api/v1/users/${alice.id}/posts`,
        headers: { authorization: `Bearer ${alice.token}` },
        payload: { title: 'from the README example', content: 'c' },
      });
      expect(created.statusCode).toBe(201);
      await printed;
      expect(output).toContain("author: { name: 'alice' }");
    } finally {
      child.kill();
    }
  });
});
