// The Redis connection of an instance (REDIS_URL): a command client and a pub/sub subscriber, with bounded failure.
//
// Why two clients: a Redis connection in subscribe mode can run no other command (RESP2).
// Why these options: a request must never wait on an unreachable Redis. The command client has no offline queue
// (a command sent while disconnected fails at once) and a command timeout (a frozen Redis fails within it), so a
// store call fails fast and the caller decides (fail closed or degrade, see plugins/shared-state.ts). The
// subscriber queues its SUBSCRIBE commands until it is connected and re-subscribes by itself after a reconnect,
// so fan-out resumes without a restart. Both reconnect forever with a capped back-off.
import type { FastifyBaseLogger } from 'fastify';
import { Redis, type RedisOptions } from 'ioredis';

/** Every key and channel this product writes starts with it, so one Redis can serve other tenants too. */
export const REDIS_NAMESPACE = 'users-posts:';

const COMMAND_TIMEOUT_MS = 1_000;
const CONNECT_TIMEOUT_MS = 2_000;

export interface RedisConnection {
  /** Commands (stores, rate-limit counters, PUBLISH); keys are prefixed with REDIS_NAMESPACE by the client. */
  readonly commands: Redis;
  /** SUBSCRIBE only (channels are not prefixed by ioredis: the event bus prefixes them). */
  readonly subscriber: Redis;
  /** Whether the command client is connected right now. */
  isUp(): boolean;
  /** Resolves when Redis answers PING within the command timeout. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

const retryStrategy = (attempt: number) => Math.min(100 * 2 ** attempt, 2_000);

/** Connects both clients; rejects (naming the URL without its password) when Redis cannot be reached at start. */
export async function openRedis(url: string, log: FastifyBaseLogger): Promise<RedisConnection> {
  const common: RedisOptions = { lazyConnect: true, connectTimeout: CONNECT_TIMEOUT_MS, retryStrategy, connectionName: 'users-posts' };
  const commands = new Redis(url, {
    ...common,
    keyPrefix: REDIS_NAMESPACE,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
  });
  const subscriber = new Redis(url, { ...common, maxRetriesPerRequest: null, autoResubscribe: true });

  // ioredis emits `error` on every failed reconnect attempt: log transitions, not every attempt.
  const where = redactedUrl(url);
  for (const [name, client] of [
    ['commands', commands],
    ['subscriber', subscriber],
  ] as const) {
    let down = false;
    client.on('error', (error: Error) => {
      if (down) return;
      down = true;
      log.error({ err: error, redis: where, client: name }, 'Redis connection lost');
    });
    client.on('ready', () => {
      if (down) log.info({ redis: where, client: name }, 'Redis connection back');
      down = false;
    });
  }

  try {
    await Promise.all([commands.connect(), subscriber.connect()]);
  } catch (error) {
    commands.disconnect();
    subscriber.disconnect();
    throw new Error(`REDIS_URL: cannot connect to ${where}: ${(error as Error).message}`, { cause: error });
  }

  return {
    commands,
    subscriber,
    isUp: () => commands.status === 'ready',
    async ping() {
      await commands.ping();
    },
    async close() {
      await Promise.allSettled([commands.quit(), subscriber.quit()]);
      commands.disconnect();
      subscriber.disconnect();
    },
  };
}

/** The URL without credentials, for logs and errors. */
function redactedUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}
