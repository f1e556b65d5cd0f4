// Safe retries (issue 13 §1): `Idempotency-Key` on the REST door's POST and PATCH. A retry storm writes once and
// emits one event; a retry is answered byte for byte without running; the same key with another request is 422;
// keys belong to their caller; they expire; 4xx answers are kept like any other.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { createAccount, createCast, type Account } from '../support/accounts.js';
import { signedUrl } from '../support/auth.js';
import { createTestApp, useTestApp } from '../support/app.js';
/** postCreated events published since the suite started (titles). */
const published: string[] = [];

const suite = useTestApp();
beforeAll(async () => {
  const events = suite.app.sharedState.events.subscribe('postCreated');
  void (async () => {
    for await (const post of events) published.push(post.title);
  })();
});

const createPost = (account: Account, key: string | undefined, title: string, headers: Record<string, string> = {}) =>
  suite.app.inject({
    method: 'POST',
    url: `/api/v1/users/${account.id}/posts`,
    headers: { ...account.headers, ...(key ? { 'idempotency-key': key } : {}), ...headers },
    payload: { title, content: 'once' },
  });
const postsTitled = (title: string) => suite.app.db.prisma.post.count({ where: { title } });

describe('a keyed write runs once', () => {
  it('attack (retry storm): 12 identical requests at once with one key write one post and emit one event; none fails otherwise', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, () => createPost(suite.alice, 'storm-1', 'Storm')));
    const statuses = answers.map((answer) => answer.statusCode);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    expect(statuses.filter((status) => status === 201).length).toBeGreaterThanOrEqual(1);
    for (const running of answers.filter((answer) => answer.statusCode === 409)) {
      expect(running.json()).toEqual({ code: 40901, message: expect.stringMatching(/still running/) });
      expect(running.headers['retry-after']).toBe('1');
    }
    expect(await postsTitled('Storm')).toBe(1);
    await sleep(50);
    expect(published.filter((title) => title === 'Storm')).toEqual(['Storm']);
    // every 201 is the same answer: the first one's
    const created = answers.filter((answer) => answer.statusCode === 201);
    for (const answer of created) expect(answer.payload).toBe(created[0]!.payload);
  });

  it('a retry gets the first answer byte for byte (status, Location, ETag, body), marked as replayed, without running', async () => {
    const first = await createPost(suite.alice, 'retry-1', 'Retried');
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const retry = await createPost(suite.alice, 'retry-1', 'Retried');
    expect(retry.statusCode).toBe(201);
    expect(retry.payload).toBe(first.payload);
    expect(retry.headers.location).toBe(first.headers.location);
    expect(retry.headers.etag).toBe(first.headers.etag);
    expect(retry.headers['content-type']).toBe(first.headers['content-type']);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(await postsTitled('Retried')).toBe(1);
    await sleep(50);
    expect(published.filter((title) => title === 'Retried')).toHaveLength(1);
  });

  it('PATCH too: the retry of an update answers the first update, even after another change', async () => {
    const patch = (key: string, age: number) =>
      suite.app.inject({
        method: 'PATCH',
        url: `/api/v1/users/${suite.bob.id}`,
        headers: { ...suite.bob.headers, 'idempotency-key': key },
        payload: { age },
      });
    const first = await patch('age-40', 40);
    await patch('age-41', 41);
    const retry = await patch('age-40', 40);
    expect(retry.payload).toBe(first.payload);
    expect((await suite.app.db.prisma.user.findUniqueOrThrow({ where: { id: suite.bob.id } })).age).toBe(41); // not run again
  });

  it('without a key, each request runs (as before)', async () => {
    await createPost(suite.alice, undefined, 'Unkeyed');
    await createPost(suite.alice, undefined, 'Unkeyed');
    expect(await postsTitled('Unkeyed')).toBe(2);
  });
});

describe('misuse of a key', () => {
  it('the same key with another body, or another URL, is 422 naming Idempotency-Key and runs nothing', async () => {
    expect((await createPost(suite.alice, 'mismatch-1', 'Original')).statusCode).toBe(201);
    const otherBody = await createPost(suite.alice, 'mismatch-1', 'Something else');
    expect(otherBody.statusCode).toBe(422);
    expect(otherBody.json()).toEqual({
      code: 42200,
      message: expect.stringContaining('different request'),
      errors: [{ field: 'Idempotency-Key', message: 'was used for a different request' }],
    });
    const otherUrl = await suite.app.inject({
      method: 'POST',
      url: `/api/v1/users/${suite.alice.id}/orders`,
      headers: { ...suite.alice.headers, 'idempotency-key': 'mismatch-1' },
      payload: { product: 'p', quantity: 1, totalCents: 1 },
    });
    expect(otherUrl.statusCode).toBe(422);
    expect(await postsTitled('Something else')).toBe(0);
    expect(await suite.app.db.prisma.order.count({ where: { userId: suite.alice.id } })).toBe(0);
  });

  it("keys belong to their caller: another user's same key and body is another write", async () => {
    const post = await createPost(suite.alice, undefined, 'Commented');
    const url = `/api/v1/posts/${post.json().data.id}/comments`;
    const comment = (account: Account) =>
      suite.app.inject({ method: 'POST', url, headers: { ...account.headers, 'idempotency-key': 'shared-key' }, payload: { body: 'Same words' } });
    const [fromAlice, fromBob] = [await comment(suite.alice), await comment(suite.bob)];
    expect([fromAlice.statusCode, fromBob.statusCode]).toEqual([201, 201]);
    expect(fromBob.json().data.id).not.toBe(fromAlice.json().data.id);
    expect(fromBob.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a 4xx answer is kept too: the retry of a refused change is the same 409, even once the e-mail is free', async () => {
    const carol = await createAccount(suite.app, 'carol@example.com');
    const dave = await createAccount(suite.app, 'dave@example.com');
    const change = () =>
      suite.app.inject({
        method: 'PATCH',
        url: `/api/v1/users/${carol.id}`,
        headers: { ...carol.headers, 'idempotency-key': 'taken-email' },
        payload: { email: dave.email },
      });
    const first = await change();
    expect(first.statusCode).toBe(409);
    await suite.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${dave.id}`,
      headers: suite.admin.headers,
      payload: { email: 'dave.moved@example.com' },
    });
    const retry = await change();
    expect(retry.statusCode).toBe(409);
    expect(retry.payload).toBe(first.payload);
  });

  it('anonymous keys are not kept (one scope for everyone would be a shared, unbounded store): each sign-up runs', async () => {
    const signUp = (email: string) =>
      suite.app.inject({ method: 'POST', url: '/api/v1/users', headers: { 'idempotency-key': 'anonymous-key' }, payload: { name: 'Anon', email } });
    expect((await signUp('anon1@example.com')).statusCode).toBe(201);
    expect((await signUp('anon2@example.com')).statusCode).toBe(201); // not a 422 "different request"
    expect(await suite.app.db.prisma.idempotencyRecord.count({ where: { key: 'anonymous-key' } })).toBe(0);
  });

  it('a signed request retried with a fresh signature (new nonce) is the same request: replayed', async () => {
    const body = JSON.stringify({ title: 'Signed once', content: 'x' });
    const send = () => {
      const { url } = signedUrl(suite.app, 'POST', `/api/v1/users/${suite.alice.id}/posts`, body);
      return suite.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', 'idempotency-key': 'signed-1' }, payload: body });
    };
    const first = await send();
    expect(first.statusCode).toBe(201);
    const retry = await send();
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.payload).toBe(first.payload);
    expect(await postsTitled('Signed once')).toBe(1);
  });

  it('the records keep no password: the fingerprint of a keyed change holding one is keyed by a server secret', async () => {
    const { createHash } = await import('node:crypto');
    await suite.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${suite.alice.id}`,
      headers: { ...suite.alice.headers, 'idempotency-key': 'no-secrets' },
      payload: { name: 'Alice' },
    });
    const record = await suite.app.db.prisma.idempotencyRecord.findFirstOrThrow({ where: { key: 'no-secrets' } });
    const bare = createHash('sha256')
      .update(`PATCH /api/v1/users/${suite.alice.id}?\n\n${JSON.stringify({ name: 'Alice' })}`)
      .digest('base64url');
    expect(record.fingerprint).not.toBe(bare);
    expect(JSON.stringify(record)).not.toContain('password');
  });

  it('a key longer than 255 characters or with spaces is refused by the contract (400)', async () => {
    for (const key of ['k'.repeat(256), 'has space']) expect((await createPost(suite.alice, key, 'Bad key')).statusCode).toBe(400);
    expect(await postsTitled('Bad key')).toBe(0);
  });
});

describe('attack: an Idempotency-Key replayed after its rights were taken away (issue 31, item 5)', () => {
  it("a demoted ADMIN's replay of a write on another user's order does not hand out the stored answer", async () => {
    const { app } = suite;
    const boss = await createAccount(app, 'boss-for-replay@example.com', 'ADMIN');
    const order = () =>
      app.inject({
        method: 'POST',
        url: `/api/v1/users/${suite.alice.id}/orders`,
        headers: { ...boss.headers, 'idempotency-key': 'order-for-alice' },
        payload: { product: 'Secret gift', quantity: 1, totalCents: 999 },
      });
    const first = await order();
    expect(first.statusCode).toBe(201);
    expect((await order()).headers['idempotent-replayed']).toBe('true'); // still an ADMIN: replayed

    await app.db.prisma.user.update({ where: { id: boss.id }, data: { role: 'USER' } });
    const replay = await order();
    expect(replay.statusCode).toBe(403);
    expect(replay.headers['idempotent-replayed']).toBeUndefined();
    expect(replay.body).not.toContain('Secret gift');
    expect(await app.db.prisma.order.count({ where: { product: 'Secret gift' } })).toBe(1); // and nothing ran again
  });
});

describe('expiry', () => {
  it('after IDEMPOTENCY_TTL_SECONDS the key is free again: the same request runs anew', async () => {
    const short = await createTestApp({ idempotencyTtlSeconds: 1 });
    try {
      const { alice: writer } = await createCast(short);
      const send = () =>
        short.inject({
          method: 'POST',
          url: `/api/v1/users/${writer.id}/posts`,
          headers: { ...writer.headers, 'idempotency-key': 'ttl' },
          payload: { title: 'Twice', content: 'x' },
        });
      const first = await send();
      expect((await send()).headers['idempotent-replayed']).toBe('true');
      await sleep(1_100);
      const later = await send();
      expect(later.statusCode).toBe(201);
      expect(later.headers['idempotent-replayed']).toBeUndefined();
      expect(later.json().data.id).not.toBe(first.json().data.id);
      expect(await short.db.prisma.post.count({ where: { title: 'Twice' } })).toBe(2);
    } finally {
      await short.close();
    }
  });
});
