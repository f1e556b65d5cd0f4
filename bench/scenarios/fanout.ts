// Subscription fan-out: N graphql-ws subscribers on postCreated, M posts created over REST; latency from each create
// request being sent to each subscriber receiving its event, and events lost.
import { createClient, type Client } from 'graphql-ws';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import type { Product } from '../servers.js';
import type { StatementCounter } from '../statements.js';

export interface FanoutFigures {
  subscribers: number;
  posts: number;
  p50: number;
  p99: number;
  max: number;
  lost: number;
  /** SQL statements per created post, including what the subscribers' resolvers read (null without a counter). */
  statementsPerPost: number | null;
}

const SUBSCRIPTION = 'subscription { postCreated { id title author { name } } }';

const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN;
const round = (ms: number) => Math.round(ms * 10) / 10;

export async function measureFanout(product: Product, subscribers: number, posts: number, counter: StatementCounter | null): Promise<FanoutFigures> {
  const url = `${product.base.replace(/^http/, 'ws')}/graphql`;
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const warmedUp = new Set<number>();
  const clients: Client[] = [];
  const disposers: (() => void)[] = [];

  for (let i = 0; i < subscribers; i++) {
    const client = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });
    clients.push(client);
    disposers.push(
      client.subscribe<{ postCreated: { title: string } }>(
        { query: SUBSCRIPTION },
        {
          next: (result) => {
            const now = performance.now();
            const title = result.data?.postCreated.title ?? '';
            if (title.startsWith('fanout-warmup')) warmedUp.add(i);
            const sent = sentAt.get(title);
            if (sent !== undefined) latencies.push(now - sent);
          },
          error: (error) => console.warn(`fan-out subscriber ${i}: ${error instanceof Error ? error.message : JSON.stringify(error)}`),
          complete: () => {},
        },
      ),
    );
  }

  const create = async (title: string) => {
    const response = await fetch(`${product.base}/api/v1/users/${product.userId}/posts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${product.token}` },
      body: JSON.stringify({ title, content: 'fan-out' }),
    });
    if (response.status !== 201) throw new Error(`create post: ${response.status} ${await response.text()}`);
  };

  try {
    // graphql-ws does not acknowledge a subscription: publish warm-up posts until every subscriber has seen one.
    for (let attempt = 0; warmedUp.size < subscribers; attempt++) {
      if (attempt === 100) throw new Error(`only ${warmedUp.size} of ${subscribers} subscribers listening`);
      await create(`fanout-warmup-${attempt}`);
      await sleep(100);
    }
    const expected = subscribers * posts;
    const deliver = async () => {
      for (let i = 0; i < posts; i++) {
        const title = `fanout-${i}`;
        sentAt.set(title, performance.now());
        await create(title);
      }
      // Wait for the stragglers (at most 10 s after the last create).
      const deadline = Date.now() + 10_000;
      while (latencies.length < expected && Date.now() < deadline) await sleep(20);
      return posts;
    };
    const statementsPerPost = counter ? await counter.per(deliver) : (await deliver(), null);
    const sorted = [...latencies].sort((a, b) => a - b);
    return {
      subscribers,
      posts,
      p50: round(percentile(sorted, 50)),
      p99: round(percentile(sorted, 99)),
      max: round(sorted.at(-1) ?? NaN),
      lost: expected - latencies.length,
      statementsPerPost,
    };
  } finally {
    for (const dispose of disposers) dispose();
    await Promise.all(clients.map((client) => client.dispose()));
  }
}
