// No write lost under concurrency across instances: 500 writes over 50 concurrent clients on two instances end as
// exactly the expected rows, with unique ids, and each subscriber (one per instance) gets one postCreated per post.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, signUp, startCluster, type Cluster, type SignedUp } from '../support/cluster.js';
import { describeWithServers } from '../support/processes.js';
import { untilChannelSubscribers } from '../support/redis-probe.js';
import { Subscription, wsClient } from '../support/ws.js';

const CLIENTS = 50;
const WRITES_PER_CLIENT = 10; // half posts (REST and GraphQL in turn), half comments
const USERS = 10;
const TAG = `noloss-${Date.now()}`;

type PostEvent = { postCreated: { id: string; title: string } };

describeWithServers('no data lost: concurrent writes across two instances', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await startCluster(2, { RATE_LIMIT_MAX: '100000' });
  }, 180_000);
  afterAll(() => cluster?.destroy(), 60_000);

  it(`${CLIENTS} clients × ${WRITES_PER_CLIENT} writes: exact rows, unique ids, one event per post per subscriber`, async () => {
    const bases = cluster.instances.map((instance) => instance.base);
    const users: SignedUp[] = [];
    for (let i = 0; i < USERS; i++) users.push(await signUp(bases[i % 2]!, `Writer ${i}`));
    const target = await call(bases[0]!, 'POST', `/api/v1/users/${users[0]!.id}/posts`, {
      token: users[0]!.accessToken,
      body: { title: 'Commented on', content: 'target of the comments' },
    });
    expect(target.status).toBe(201);
    const targetPostId: number = target.body.data.id;

    const clients = cluster.instances.map((instance) => wsClient(instance.wsUrl));
    try {
      const subscriptions = clients.map((client) => new Subscription<PostEvent>(client, 'subscription { postCreated { id title } }'));
      await untilChannelSubscribers(cluster.redis.url, cluster.instances.length);

      const createdPostIds: number[] = [];
      const createdCommentIds: number[] = [];
      const failures: string[] = [];
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, client) => {
          const user = users[client % USERS]!;
          for (let write = 0; write < WRITES_PER_CLIENT; write++) {
            const base = bases[(client + write) % bases.length]!;
            const title = `${TAG} ${client}/${write}`;
            if (write % 2 === 1) {
              const answer = await call(base, 'POST', `/api/v1/posts/${targetPostId}/comments`, { token: user.accessToken, body: { body: title } });
              if (answer.status === 201) createdCommentIds.push(answer.body.data.id);
              else failures.push(`comment ${answer.status}`);
            } else if (write % 4 === 0) {
              const answer = await call(base, 'POST', `/api/v1/users/${user.id}/posts`, { token: user.accessToken, body: { title, content: 'c' } });
              if (answer.status === 201) createdPostIds.push(answer.body.data.id);
              else failures.push(`REST post ${answer.status}`);
            } else {
              const answer = await call(base, 'POST', '/graphql', {
                token: user.accessToken,
                body: {
                  query: 'mutation($t: String!, $a: ID!) { createPost(title: $t, content: "c", authorId: $a) { id } }',
                  variables: { t: title, a: user.id },
                },
              });
              if (answer.body?.data?.createPost) createdPostIds.push(Number(answer.body.data.createPost.id));
              else failures.push(`GraphQL post ${answer.status} ${JSON.stringify(answer.body?.errors)}`);
            }
          }
        }),
      );

      const expectedPosts = (CLIENTS * WRITES_PER_CLIENT) / 2;
      expect(failures).toEqual([]);
      expect(new Set(createdPostIds).size).toBe(expectedPosts);
      expect(new Set(createdCommentIds).size).toBe(CLIENTS * WRITES_PER_CLIENT - expectedPosts);

      // What the database holds: exactly these rows.
      const db = new pg.Client({ connectionString: cluster.databaseUrl });
      await db.connect();
      try {
        const posts = await db.query<{ id: number }>('SELECT id FROM posts WHERE title LIKE $1 ORDER BY id', [`${TAG} %`]);
        expect(posts.rows.map((row) => row.id)).toEqual([...createdPostIds].sort((x, y) => x - y));
        const comments = await db.query<{ id: number }>('SELECT id FROM comments WHERE body LIKE $1 ORDER BY id', [`${TAG} %`]);
        expect(comments.rows.map((row) => row.id)).toEqual([...createdCommentIds].sort((x, y) => x - y));
      } finally {
        await db.end();
      }

      // What each subscriber got: every post once, nothing else.
      for (const subscription of subscriptions) {
        const deadline = Date.now() + 20_000;
        while (subscription.results.length < expectedPosts && Date.now() < deadline) await sleep(50);
        await sleep(300); // a duplicate would arrive right behind
        const ids = subscription.results.map((result) => Number(result.data?.postCreated.id));
        expect(ids.length).toBe(expectedPosts);
        expect([...ids].sort((x, y) => x - y)).toEqual([...createdPostIds].sort((x, y) => x - y));
      }
    } finally {
      await Promise.all(clients.map((client) => client.dispose()));
    }
  }, 180_000);
});
