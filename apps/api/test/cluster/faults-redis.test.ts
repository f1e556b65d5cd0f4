// Redis lost under a running instance: security checks that need it fail closed (503, at once), everything else
// keeps working (degraded), and the instance recovers by itself when Redis returns. Also: Redis absent at start.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, metric, signUp, signedUrl, startCluster, type Cluster, type SignedUp } from '../support/cluster.js';
import { describeWithServers, freePort, startApi } from '../support/processes.js';
import { untilChannelSubscribers } from '../support/redis-probe.js';
import { Subscription, wsClient } from '../support/ws.js';

/** How fast a request that needs Redis must fail while Redis is down (the command client has no offline queue). */
const FAIL_FAST_MS = 2_500;

type PostEvent = { postCreated: { id: string; title: string } };

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

describeWithServers('Redis lost while serving', () => {
  let cluster: Cluster;
  let base: string;
  let user: SignedUp;
  let sessionCookie: string;
  let apiKey: string;

  beforeAll(async () => {
    cluster = await startCluster(1);
    base = cluster.instances[0]!.base;
    user = await signUp(base, 'Steady');
    const session = await fetch(`${base}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: user.email, password: 'cluster-password-1', session: true }),
    });
    sessionCookie = session.headers.getSetCookie()[0]!.split(';')[0]!;
    const key = await call(base, 'POST', '/api/v1/api-keys', { token: user.accessToken, body: { name: 'ci' } });
    apiKey = key.body.data.key;
  }, 180_000);
  afterAll(() => cluster?.destroy(), 60_000);

  it('fails closed for Bearer tokens, logouts and signed requests, degrades for the rest, and recovers without a restart', async () => {
    const client = wsClient(cluster.instances[0]!.wsUrl);
    try {
      const subscription = new Subscription<PostEvent>(client, 'subscription { postCreated { id title } }');
      await untilChannelSubscribers(cluster.redis.url, 1);

      expect(await metric(base, 'redis_up')).toBe(1);
      await cluster.redis.stop();

      // Fail closed, promptly, in the documented envelope.
      const bearer = await timed(() => call(base, 'GET', `/api/v1/users/${user.id}/orders`, { token: user.accessToken }));
      expect(bearer.value.status).toBe(503);
      expect(bearer.value.body).toMatchObject({ code: 50300, message: expect.stringMatching(/retry/) });
      expect(bearer.ms).toBeLessThan(FAIL_FAST_MS);
      const graphql = await call(base, 'POST', '/graphql', { token: user.accessToken, body: { query: '{ currentUser { id } }' } });
      expect(graphql.status).toBe(503);
      expect((await call(base, 'POST', '/logout', { token: user.accessToken })).status).toBe(503);
      const signed = await timed(() => call(base, 'GET', signedUrl(cluster.secrets.signing, 'GET', '/api/v1/users?pageSize=1')));
      expect(signed.value.status).toBe(503);
      expect(signed.ms).toBeLessThan(FAIL_FAST_MS);

      // Degrade: anonymous reads, session cookies and API keys need no Redis; rate limiting skips counting.
      const anonymous = await timed(() => call(base, 'GET', '/api/v1/users?pageSize=1'));
      expect(anonymous.value.status).toBe(200);
      expect(anonymous.ms).toBeLessThan(FAIL_FAST_MS);
      expect(anonymous.value.headers.get('x-ratelimit-limit')).not.toBeNull();
      expect((await call(base, 'GET', `/api/v1/users/${user.id}/orders`, { headers: { cookie: sessionCookie } })).status).toBe(200);
      expect((await call(base, 'GET', `/api/v1/users/${user.id}/orders?api_key=${apiKey}`)).status).toBe(200);
      // A write succeeds; its postCreated event cannot be fanned out and is lost (documented).
      const duringOutage = await call(base, 'POST', `/api/v1/users/${user.id}/posts`, {
        headers: { cookie: sessionCookie },
        body: { title: 'during the outage', content: 'x' },
      });
      expect(duringOutage.status).toBe(201);
      const ready = await call(base, 'GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'ok', checks: { database: 'up', redis: 'down' } });
      expect(await metric(base, 'redis_up')).toBe(0);

      await cluster.redis.start(); // same port, empty: no persistence in the test

      // Recovery by itself: the command client reconnects, the subscriber re-subscribes.
      const deadline = Date.now() + 15_000;
      while ((await call(base, 'GET', '/readyz')).body.checks.redis !== 'up') {
        if (Date.now() > deadline) throw new Error('Redis not seen up again within 15 s');
        await sleep(200);
      }
      expect((await call(base, 'GET', `/api/v1/users/${user.id}/orders`, { token: user.accessToken })).status).toBe(200);
      expect(await metric(base, 'redis_up')).toBe(1);
      await untilChannelSubscribers(cluster.redis.url, 1, 15_000);
      const afterOutage = await call(base, 'POST', `/api/v1/users/${user.id}/posts`, {
        token: user.accessToken,
        body: { title: 'after the outage', content: 'y' },
      });
      expect(afterOutage.status).toBe(201);
      expect((await subscription.next(10_000)).data?.postCreated).toEqual({ id: String(afterOutage.body.data.id), title: 'after the outage' });
      expect(subscription.results).toEqual([]);

      // Logout works again and is enforced.
      expect((await call(base, 'POST', '/logout', { token: user.accessToken })).status).toBe(204);
      expect((await call(base, 'GET', `/api/v1/users/${user.id}/orders`, { token: user.accessToken })).status).toBe(401);
      expect(cluster.instances[0]!.child.exitCode).toBeNull();
    } finally {
      await client.dispose();
    }
  }, 120_000);

  it('does not hang on a frozen Redis: Bearer requests get 503 within the command timeout, and all is well once it thaws', async () => {
    // The redis-server process of this cluster, by its title "redis-server 127.0.0.1:<port>".
    const pid = Number(
      execFileSync('pgrep', ['-f', `redis-server 127.0.0.1:${cluster.redis.port}`], { encoding: 'utf8' })
        .trim()
        .split('\n')[0],
    );
    const fresh = await signUp(base, 'Frozen');
    process.kill(pid, 'SIGSTOP');
    try {
      const frozen = await timed(() => call(base, 'GET', `/api/v1/users/${fresh.id}/orders`, { token: fresh.accessToken }));
      expect(frozen.value.status).toBe(503);
      expect(frozen.ms).toBeLessThan(FAIL_FAST_MS);
      const anonymous = await timed(() => call(base, 'GET', '/api/v1/users?pageSize=1'));
      expect(anonymous.value.status).toBe(200);
      expect(anonymous.ms).toBeLessThan(FAIL_FAST_MS);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const deadline = Date.now() + 15_000;
    for (;;) {
      const answer = await call(base, 'GET', `/api/v1/users/${fresh.id}/orders`, { token: fresh.accessToken });
      if (answer.status === 200) break;
      if (Date.now() > deadline) throw new Error(`still ${answer.status} 15 s after Redis thawed`);
      await sleep(200);
    }
  }, 60_000);

  it('refuses to start when REDIS_URL is set but Redis cannot be reached, and says why', async () => {
    const closedPort = await freePort();
    const start = startApi({ DATABASE_URL: cluster.databaseUrl, REDIS_URL: `redis://:hunter2@127.0.0.1:${closedPort}` }, 30_000);
    await expect(start).rejects.toThrow(/REDIS_URL: cannot connect to redis:\/\/:\*\*\*@127\.0\.0\.1/);
    await expect(start).rejects.not.toThrow(/hunter2/);
  }, 60_000);
});
