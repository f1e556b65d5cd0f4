// isDatabaseUnavailableError on the errors real drivers raise: an unreachable server, a session terminated by the
// server (57P01) and pool timeouts are "unavailable"; a bad query or a constraint violation is not. Also the pool's
// figures (poolStats) on each kind of database.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer } from 'node:net';
import { createDatabase, isDatabaseUnavailableError, type Database } from '../src/index.js';
import { createTestDatabase } from '../src/testing.js';

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The error `promise` rejects with. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

describe('isDatabaseUnavailableError', () => {
  it('is true for a PostgreSQL server nobody listens for, and the query fails at once', async () => {
    const db = await createDatabase({ databaseUrl: `postgres://postgres@127.0.0.1:${await closedPort()}/none` });
    try {
      const started = Date.now();
      const error = await failure(db.ping());
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(isDatabaseUnavailableError(error)).toBe(true);
      expect(db.poolStats()).toEqual({ total: 0, idle: 0, waiting: 0, max: 10 });
    } finally {
      await db.close();
    }
  });

  it('is true for the shapes without a code: a dropped connection, a pool or query timeout', () => {
    for (const message of ['Connection terminated unexpectedly', 'timeout exceeded when trying to connect', 'Query read timeout']) {
      expect(isDatabaseUnavailableError(new Error(message))).toBe(true);
      expect(isDatabaseUnavailableError(new Error('wrapped', { cause: new Error(message) }))).toBe(true);
    }
    expect(isDatabaseUnavailableError(new Error('Something else'))).toBe(false);
    expect(isDatabaseUnavailableError(undefined)).toBe(false);
  });
});

describe('isDatabaseUnavailableError on a live database', () => {
  let db: Database;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db?.close());

  it('is false for a bad query and a unique violation', async () => {
    expect(isDatabaseUnavailableError(await failure(db.prisma.$queryRawUnsafe('SELECT * FROM no_such_table')))).toBe(false);
    await db.prisma.user.create({ data: { name: 'A', email: 'same@example.com' } });
    expect(isDatabaseUnavailableError(await failure(db.prisma.user.create({ data: { name: 'B', email: 'same@example.com' } })))).toBe(false);
  });

  // PostgreSQL only: PGlite has no server to end the session.
  (process.env.DATABASE_URL ? it : it.skip)(
    'is true for a session the server terminates (57P01 admin_shutdown), after which the pool carries on',
    async () => {
      const error = await failure(db.prisma.$queryRawUnsafe('SELECT pg_terminate_backend(pg_backend_pid())'));
      expect(isDatabaseUnavailableError(error)).toBe(true);
      await db.ping();
      const stats = db.poolStats();
      expect(stats).toMatchObject({ waiting: 0, max: 10 });
      expect(stats!.total).toBeGreaterThan(0);
    },
  );

  it('poolStats is defined on PostgreSQL and undefined on PGlite, which has no pool', () => {
    if (db.kind === 'postgres') expect(db.poolStats()).toBeDefined();
    else expect(db.poolStats()).toBeUndefined();
  });
});
