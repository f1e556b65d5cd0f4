// Two instances on one PostgreSQL and one Redis: what one instance learns, the other knows (fan-out, logout,
// rate-limit budget, nonces, refresh-token reuse).
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, PASSWORD, signUp, signedUrl, startCluster, type Cluster, type SignedUp } from '../support/cluster.js';
import { describeWithServers } from '../support/processes.js';
import { untilChannelSubscribers } from '../support/redis-probe.js';
import { Subscription, wsClient } from '../support/ws.js';

const LOGIN_LIMIT = 6;

describeWithServers('two instances sharing PostgreSQL and Redis', () => {
  let cluster: Cluster;
  let a: string;
  let b: string;

  beforeAll(async () => {
    cluster = await startCluster(2, { LOGIN_RATE_LIMIT_MAX: String(LOGIN_LIMIT) });
    [a, b] = cluster.instances.map((instance) => instance.base) as [string, string];
  }, 180_000);
  afterAll(() => cluster?.destroy(), 60_000);

  it('a subscriber on A receives the posts created through B, by REST and by GraphQL, once each', async () => {
    const author = await signUp(b, 'Author');
    const client = wsClient(cluster.instances[0]!.wsUrl);
    try {
      const subscription = new Subscription<{ postCreated: { id: string; title: string; author: { id: string } } }>(
        client,
        'subscription { postCreated { id title author { id } } }',
      );
      await untilChannelSubscribers(cluster.redis.url, 1);

      const rest = await call(b, 'POST', `/api/v1/users/${author.id}/posts`, {
        token: author.accessToken,
        body: { title: 'Via REST on B', content: 'x' },
      });
      expect(rest.status).toBe(201);
      const graphql = await call(b, 'POST', '/graphql', {
        token: author.accessToken,
        body: { query: `mutation { createPost(title: "Via GraphQL on B", content: "y", authorId: ${author.id}) { id } }` },
      });
      expect(graphql.body.errors).toBeUndefined();

      expect((await subscription.next(10_000)).data?.postCreated).toEqual({
        id: String(rest.body.data.id),
        title: 'Via REST on B',
        author: { id: String(author.id) },
      });
      expect((await subscription.next(10_000)).data?.postCreated).toEqual({
        id: graphql.body.data.createPost.id,
        title: 'Via GraphQL on B',
        author: { id: String(author.id) },
      });
      await sleep(300);
      expect(subscription.results).toEqual([]); // nothing twice
    } finally {
      await client.dispose();
    }
  }, 60_000);

  it('attack: an ADMIN demoted through B stops receiving authors’ e-mails at once on its subscription on A (accessChanged over Redis)', async () => {
    const setRole = async (id: number, role: 'ADMIN' | 'USER') => {
      const body = { role };
      const url = signedUrl(cluster.secrets.signing, 'PATCH', `/api/v1/users/${id}`, undefined, JSON.stringify(body));
      expect((await call(b, 'PATCH', url, { body })).status).toBe(200);
    };
    const mallory = await signUp(a, 'Mallory');
    const author = await signUp(b, 'Writer');
    await setRole((await signUp(b, 'Keeper')).id, 'ADMIN'); // so that Mallory is not the last ADMIN (409 40902)
    await setRole(mallory.id, 'ADMIN');
    const client = wsClient(cluster.instances[0]!.wsUrl, { authorization: `Bearer ${mallory.accessToken}` });
    try {
      const subscription = new Subscription<{ postCreated: { title: string; author: { email: string } } }>(
        client,
        'subscription { postCreated { title author { email } } }',
      );
      await untilChannelSubscribers(cluster.redis.url, 1);
      const post = async (title: string) =>
        expect((await call(b, 'POST', `/api/v1/users/${author.id}/posts`, { token: author.accessToken, body: { title, content: 'x' } })).status).toBe(
          201,
        );
      await post('while ADMIN');
      expect((await subscription.next(10_000)).data?.postCreated).toEqual({ title: 'while ADMIN', author: { email: author.email } });

      await setRole(mallory.id, 'USER'); // on B: A hears of it through Redis, before the next post's event
      await post('after the demotion');
      expect((await subscription.next(10_000)).data?.postCreated).toEqual({ title: 'after the demotion', author: { email: '' } });
    } finally {
      await client.dispose();
    }
  }, 60_000);

  it('a logout on A rejects the access token on B (and on A)', async () => {
    const user = await signUp(a, 'Leaver');
    expect((await call(b, 'GET', '/graphql?query={currentUser{id}}', { token: user.accessToken })).body.data).toEqual({
      currentUser: { id: String(user.id) },
    });

    expect((await call(a, 'POST', '/logout', { token: user.accessToken })).status).toBe(204);

    for (const base of [b, a]) {
      const after = await call(base, 'GET', `/api/v1/users/${user.id}/orders`, { token: user.accessToken });
      expect(after.status).toBe(401);
      expect(after.body).toMatchObject({ code: 40100, error: 'The access token was revoked' });
    }
  }, 60_000);

  it('shares one rate-limit budget: the login bucket and the default bucket count requests of both instances', async () => {
    const user = await signUp(a, 'Limited');
    // Login bucket (per IP + email, successful or not): signUp's login on A was attempt 1; the next attempts
    // alternate between the instances and the budget is their sum.
    for (let attempt = 2; attempt <= LOGIN_LIMIT; attempt++) {
      const base = attempt % 2 ? a : b;
      const answer = await call(base, 'POST', '/login', { body: { email: user.email, password: 'wrong-password' } });
      expect(answer.status).toBe(401);
      expect(Number(answer.headers.get('x-ratelimit-remaining'))).toBe(LOGIN_LIMIT - attempt);
    }
    for (const base of [a, b]) {
      // The right password: refused by the limit, not by the password.
      const refused = await call(base, 'POST', '/login', { body: { email: user.email, password: PASSWORD } });
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe(42900);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }

    // Default bucket (per user): each answer's Remaining is one less than the previous one's, whichever instance.
    const remaining: number[] = [];
    for (const base of [a, b, a, b]) {
      const answer = await call(base, 'GET', `/api/v1/users/${user.id}`, { token: user.accessToken });
      expect(answer.status).toBe(200);
      remaining.push(Number(answer.headers.get('x-ratelimit-remaining')));
    }
    expect(remaining.slice(1).map((value, i) => remaining[i]! - value)).toEqual([1, 1, 1]);
  }, 60_000);

  it('a signed request is accepted once: its nonce replayed on the other instance is refused', async () => {
    const url = signedUrl(cluster.secrets.signing, 'GET', '/api/v1/users?pageSize=1');
    expect((await call(a, 'GET', url)).status).toBe(200);
    const replay = await call(b, 'GET', url);
    expect(replay.status).toBe(401);
    expect(replay.body.error).toMatch(/nonce already used/);
  }, 30_000);

  it('a refresh-token reuse detected on B revokes the tokens issued on A', async () => {
    const user: SignedUp = await signUp(a, 'Reused');
    const rotated = await call(a, 'POST', '/auth/refresh', { body: { refreshToken: user.refreshToken } });
    expect(rotated.status).toBe(200);
    const issuedOnA = rotated.body as { accessToken: string; refreshToken: string };
    expect((await call(b, 'GET', `/api/v1/users/${user.id}/orders`, { token: issuedOnA.accessToken })).status).toBe(200);

    // Strict by default (SPEC §3): presenting the spent token again, on the other instance, is reuse.
    const reuse = await call(b, 'POST', '/auth/refresh', { body: { refreshToken: user.refreshToken } });
    expect(reuse.status).toBe(401);

    for (const base of [a, b]) {
      expect((await call(base, 'GET', `/api/v1/users/${user.id}/orders`, { token: issuedOnA.accessToken })).status).toBe(401);
      expect((await call(base, 'POST', '/auth/refresh', { body: { refreshToken: issuedOnA.refreshToken } })).status).toBe(401);
    }
  }, 60_000);

  it('a sign-in ended on A stops its access token on B at once; the other sign-in of the user goes on', async () => {
    const user = await signUp(a, 'Two devices');
    const other = await call(b, 'POST', '/login', { body: { email: user.email, password: PASSWORD } });
    expect(other.status).toBe(200);
    const listed = await call(a, 'GET', '/api/v1/sessions', { token: user.accessToken });
    const current = (listed.body.data.items as { id: string; current: boolean }[]).find((item) => item.current)!;

    expect((await call(a, 'DELETE', `/api/v1/sessions/${current.id}`, { token: other.body.accessToken })).status).toBe(204);
    for (const base of [b, a]) {
      expect((await call(base, 'GET', `/api/v1/users/${user.id}/orders`, { token: user.accessToken })).status).toBe(401);
      expect((await call(base, 'GET', `/api/v1/users/${user.id}/orders`, { token: other.body.accessToken })).status).toBe(200);
    }
    expect((await call(b, 'POST', '/auth/refresh', { body: { refreshToken: user.refreshToken } })).status).toBe(401);
  }, 60_000);

  it('a password change on A revokes, on B, the other sign-ins and the API keys; the renewed pair works on B', async () => {
    const user = await signUp(a, 'Rotator');
    const key = await call(a, 'POST', '/api/v1/api-keys', { token: user.accessToken, body: { name: 'script' } });
    expect(key.status).toBe(201);
    const other = await call(b, 'POST', '/login', { body: { email: user.email, password: PASSWORD } });

    const changed = await call(a, 'POST', '/auth/password', {
      token: user.accessToken,
      body: { currentPassword: PASSWORD, newPassword: 'a new cluster passphrase' },
    });
    expect(changed.status).toBe(200);
    expect((await call(b, 'GET', `/api/v1/api-keys?api_key=${key.body.data.key}`)).status).toBe(401);
    expect((await call(b, 'GET', '/api/v1/api-keys', { token: other.body.accessToken })).status).toBe(401);
    expect((await call(b, 'POST', '/auth/refresh', { body: { refreshToken: other.body.refreshToken } })).status).toBe(401);
    expect((await call(b, 'GET', '/api/v1/api-keys', { token: user.accessToken })).status).toBe(401);
    expect((await call(b, 'GET', '/api/v1/api-keys', { token: changed.body.accessToken })).status).toBe(200);
  }, 60_000);

  it('an Idempotency-Key holds across instances: a retry on B of a write made on A is replayed; a storm on both writes once', async () => {
    const author = await signUp(a, 'Keyed');
    const write = (base: string, key: string, title: string) =>
      call(base, 'POST', `/api/v1/users/${author.id}/posts`, {
        token: author.accessToken,
        body: { title, content: 'x' },
        headers: { 'idempotency-key': key },
      });
    const first = await write(a, 'cluster-key-1', 'Once across instances');
    expect(first.status).toBe(201);
    const retry = await write(b, 'cluster-key-1', 'Once across instances');
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);

    const storm = await Promise.all(Array.from({ length: 8 }, (_, n) => write(n % 2 ? a : b, 'cluster-key-2', 'Storm across instances')));
    expect(storm.every((answer) => answer.status === 201 || answer.status === 409)).toBe(true);
    const listed = await call(a, 'GET', `/api/v1/users/${author.id}/posts?pageSize=100`);
    const titles = (listed.body.data.items as { title: string }[]).map((post) => post.title);
    expect(titles.filter((title) => title === 'Once across instances')).toHaveLength(1);
    expect(titles.filter((title) => title === 'Storm across instances')).toHaveLength(1);
  }, 60_000);
});
