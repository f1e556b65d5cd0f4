// The SQL reader's statements prepared by name on PostgreSQL (sql-reader.ts StatementNames): once per connection, the
// same answers, a bounded number of names whatever the callers send, a plan made stale by a migration prepared again,
// and none at all when switched off (a PgBouncer that cannot keep them).
import { afterAll, describe, expect, it } from '@jest/globals';
import { PREPARED, StatementNames } from '../src/sql-reader.js';
import { createTestDatabase, type Database } from '../src/testing.js';

const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;

describe('statement names', () => {
  it('names each text once, sends texts past the bound unnamed, and renews a stale name once for reads that failed together', () => {
    const names = new StatementNames(2);
    const [a, b] = [names.of('SELECT 1'), names.of('SELECT 2')];
    expect(a).toMatch(/^users_posts_\d+$/);
    expect(new Set([a, b, names.of('SELECT 1')]).size).toBe(2);
    expect(names.of('SELECT 3')).toBeUndefined();
    expect(names.renew('SELECT 3', 'users_posts_0')).toBeUndefined(); // never named: nothing to renew
    const renewed = names.renew('SELECT 1', a!);
    expect(renewed).not.toBe(a);
    expect(names.renew('SELECT 1', a!)).toBe(renewed); // a second read that failed under the old name: the same new one
    expect(names.of('SELECT 1')).toBe(renewed);
  });

  it('names nothing more once turned off, and tells it once', () => {
    const told: Error[] = [];
    const names = new StatementNames(10, (reason) => told.push(reason));
    expect(names.of('SELECT 1')).toBeDefined();
    names.turnOff(new Error('lost'));
    names.turnOff(new Error('lost again'));
    expect([names.of('SELECT 1'), names.of('SELECT 2')]).toEqual([undefined, undefined]);
    expect(told.map((error) => error.message)).toEqual(['lost']);
  });
});

onPostgres('prepared statements on PostgreSQL', () => {
  const open: Database[] = [];
  const fresh = async (options: Parameters<typeof createTestDatabase>[0] = {}) => {
    // One connection: what the view pg_prepared_statements shows is then that connection's.
    const db = await createTestDatabase({ pool: { max: 1 }, ...options });
    open.push(db);
    const user = await db.prisma.user.create({ data: { name: 'Ada', email: 'ada@example.com' } });
    return { db, user };
  };
  afterAll(() => Promise.all(open.map((db) => db.close())));
  const READ = 'SELECT id, name FROM users WHERE id = $1';
  const preparedOf = (db: Database) => db.sql.rows<{ statement: string }>('SELECT statement FROM pg_prepared_statements ORDER BY prepare_time');

  it('prepares a repeated read once per connection and answers as an unnamed one', async () => {
    const { db, user } = await fresh();
    for (let i = 0; i < 5; i++) expect(await db.sql.rows(READ, [user.id], PREPARED)).toEqual([{ id: user.id, name: 'Ada' }]);
    expect((await preparedOf(db)).filter((row) => row.statement === READ)).toHaveLength(1);
  });

  it('prepares nothing when switched off (DATABASE_PREPARED_STATEMENTS=false)', async () => {
    const { db, user } = await fresh({ preparedStatements: false });
    for (let i = 0; i < 3; i++) expect(await db.sql.rows(READ, [user.id], PREPARED)).toEqual([{ id: user.id, name: 'Ada' }]);
    expect(await preparedOf(db)).toEqual([]);
  });

  it('attack: reads of ever new texts leave at most the bound prepared on the connection', async () => {
    const { db } = await fresh();
    for (let i = 0; i < 250; i++) await db.sql.rows(`SELECT ${i} AS n`, [], PREPARED); // a caller misusing PREPARED
    expect((await preparedOf(db)).length).toBeLessThanOrEqual(200); // MAX_NAMED_STATEMENTS
    expect(await db.sql.rows('SELECT 1 + 1 AS two', [], PREPARED)).toEqual([{ two: 2 }]); // past the bound: still answered, unnamed
  });

  it('reads that do not opt in are not prepared (a filtered page, a cursor page: texts a client chooses)', async () => {
    const { db, user } = await fresh();
    for (let i = 0; i < 3; i++) expect(await db.sql.rows(READ, [user.id])).toEqual([{ id: user.id, name: 'Ada' }]);
    expect((await preparedOf(db)).filter((row) => row.statement === READ)).toEqual([]);
  });

  it('goes on unprepared, and says so once, when the server loses what a connection prepared (a pooler in transaction mode)', async () => {
    const told: Error[] = [];
    const { db, user } = await fresh({ onPreparedStatementsOff: (reason) => told.push(reason) });
    expect(await db.sql.rows(READ, [user.id], PREPARED)).toEqual([{ id: user.id, name: 'Ada' }]);
    // What a pooler does: the next statement reaches a server session without the name pg believes is prepared.
    await db.sql.rows('DEALLOCATE ALL');
    for (let i = 0; i < 3; i++) expect(await db.sql.rows(READ, [user.id], PREPARED)).toEqual([{ id: user.id, name: 'Ada' }]);
    expect(told.map((error) => (error as Error & { code?: string }).code)).toEqual(['26000']);
    expect(await preparedOf(db)).toEqual([]); // nothing named since
  });

  it('answers after a migration changes the type of a column it reads (the stale plan is prepared again)', async () => {
    const { db, user } = await fresh();
    expect(await db.sql.rows(READ, [user.id], PREPARED)).toEqual([{ id: user.id, name: 'Ada' }]);
    await db.prisma.$executeRawUnsafe('ALTER TABLE users ALTER COLUMN name TYPE varchar(300)');
    // PostgreSQL refuses the prepared plan ("cached plan must not change result type"); the reader prepares it anew.
    expect(await db.sql.rows(READ, [user.id], PREPARED)).toEqual([{ id: user.id, name: 'Ada' }]);
    expect(await db.sql.rows(READ, [user.id], PREPARED)).toEqual([{ id: user.id, name: 'Ada' }]);
  });
});
