// Attack: an SSE subscription opened with an API key outlives the key's revocation. Deleting a key is a revoked
// credential (auth/access-changes.ts): the user's open streams must authorize again at once, not at the next periodic
// re-verification (up to 30 s of an ADMIN's view of every author's e-mail on a key its owner has revoked).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { ManualClock } from '../../src/auth/clock.js';
import { accessTokenOf, bearer, createAuthTestApp, createUser, type TestUser } from '../support/auth.js';
import { listen, SseStream, watchSubscribers } from '../support/ws.js';

const POST_CREATED = 'subscription { postCreated { title author { email } } }';
let app: FastifyInstance;
let urls: { http: string; ws: string };
let subscribers: ReturnType<typeof watchSubscribers>;
let alice: TestUser;

beforeAll(async () => {
  app = await createAuthTestApp({ clock: new ManualClock() });
  urls = await listen(app);
  subscribers = watchSubscribers(app);
  alice = await createUser(app, { email: 'alice@example.com' });
}, 60_000);
afterAll(() => app?.close());

async function postAsAlice(title: string): Promise<void> {
  const response = await app.inject({
    method: 'POST',
    url: `/api/v1/users/${alice.id}/posts`,
    headers: bearer(await accessTokenOf(app, alice)),
    payload: { title, content: 'c' },
  });
  expect(response.statusCode).toBe(201);
}

describe('a stream on an API key ends when the key is revoked', () => {
  it('attack: an ADMIN’s stream on a deleted API key shows no further e-mail', async () => {
    const admin = await createUser(app, { email: 'keyed-admin@example.com', role: 'ADMIN' });
    const token = await accessTokenOf(app, admin);
    const created = await app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: bearer(token), payload: { name: 'leaked' } });
    expect(created.statusCode).toBe(201);
    const { id, key } = (created.json() as { data: { id: number; key: string } }).data;

    const stream = await SseStream.open(`${urls.http}/graphql?query=${encodeURIComponent(POST_CREATED)}&api_key=${encodeURIComponent(key)}`);
    try {
      expect(stream.response.status).toBe(200);
      await subscribers.until(1);
      await postAsAlice('before');
      expect(JSON.parse((await stream.event())!.data)).toEqual({
        data: { postCreated: { title: 'before', author: { email: 'alice@example.com' } } },
      });

      const revoked = await app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${id}`, headers: bearer(token) });
      expect(revoked.statusCode).toBe(204);
      await postAsAlice('after');
      const next = await stream.event();
      // The stream ends (complete, or closed): no event of after the revocation, least of all an e-mail.
      expect(next === null || next.event === 'complete').toBe(true);
      expect(stream.lines.join('\n')).not.toContain('"after"');
    } finally {
      stream.close();
    }
  });
});
