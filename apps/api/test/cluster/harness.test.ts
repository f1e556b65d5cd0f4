// The process harness itself: a throwaway PostgreSQL keeps its port and data across stop/start, redis-server answers
// and stops, and the product started on that PostgreSQL answers and exits 0 on SIGTERM.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { Socket } from 'node:net';
import pg from 'pg';
import {
  describeWithServers,
  startApi,
  startPostgres,
  startRedis,
  type ApiProcess,
  type PostgresServer,
  type RedisServer,
} from '../support/processes.js';

/** One Redis command in the inline protocol; resolves with the first reply line. */
function redisCommand(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    socket.setTimeout(5_000, () => socket.destroy(new Error('redis timeout')));
    socket.once('error', reject);
    socket.once('data', (chunk) => {
      resolve(chunk.toString().split('\r\n')[0]!);
      socket.end();
    });
    socket.connect(port, '127.0.0.1', () => socket.write(`${command}\r\n`));
  });
}

describeWithServers('the process harness', () => {
  let postgres: PostgresServer;
  let redis: RedisServer;
  let api: ApiProcess | undefined;

  beforeAll(async () => {
    [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
  }, 120_000);
  afterAll(async () => {
    await api?.stop(5_000);
    await Promise.all([postgres?.destroy(), redis?.destroy()]);
  });

  it('gives a migrated database that survives a stop and start on the same port', async () => {
    const url = await postgres.createDatabase();
    expect(new URL(url).port).toBe(String(postgres.port));
    const query = async (sql: string) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query(sql)).rows;
      } finally {
        await client.end();
      }
    };
    expect(await query(`SELECT count(*)::int AS n FROM _prisma_migrations WHERE finished_at IS NOT NULL`)).toEqual([{ n: expect.any(Number) }]);
    await query(`INSERT INTO users (name, email, updated_at) VALUES ('Kept', 'kept@example.com', now())`);
    await postgres.stop('immediate');
    await expect(query('SELECT 1')).rejects.toThrow(/ECONNREFUSED/);
    await postgres.start();
    expect(await query(`SELECT name FROM users`)).toEqual([{ name: 'Kept' }]);
  });

  it('runs redis-server on a loopback port, stoppable and restartable', async () => {
    expect(redis.url).toBe(`redis://127.0.0.1:${redis.port}`);
    expect(await redisCommand(redis.port, 'PING')).toBe('+PONG');
    await redis.stop();
    await expect(redisCommand(redis.port, 'PING')).rejects.toThrow(/ECONNREFUSED/);
    await redis.start();
    expect(await redisCommand(redis.port, 'PING')).toBe('+PONG');
  });

  it('starts the product on that PostgreSQL, ready, and stops it with exit code 0', async () => {
    api = await startApi({ DATABASE_URL: await postgres.createDatabase() });
    const response = await fetch(`${api.base}/api/v1/users`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ code: 0, data: { total: 0 } });
    expect(api.wsUrl).toBe(`${api.base.replace('http', 'ws')}/graphql`);
    expect(await api.stop()).toBe(0);
    await expect(fetch(`${api.base}/healthz`)).rejects.toThrow();
  });
});
