// The embedded PGlite in its own thread (src/embedded/): the wire-protocol bridge as PostgreSQL clients see it, its
// isolation of transactions between connections, hostile bytes on its socket, and the thread's start and stop.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { createDatabase, REPO_ROOT, startEmbeddedDatabase, type Database, type StartingDatabase } from '../src/index.js';
import { startPGliteThread, type PGliteThread } from '../src/embedded/pglite-thread.js';
import { temporaryDirectories } from './support/temp-dirs.js';

const tempDir = temporaryDirectories('users-posts-embedded-');

/** The socket directory of a thread's URL (…?host=<dir>). */
const socketDirOf = (thread: PGliteThread) => new URL(thread.url).searchParams.get('host')!;

describe('the embedded database thread, over the PostgreSQL wire protocol', () => {
  let thread: PGliteThread;
  let starting: StartingDatabase;
  let db: Database;
  const clients: pg.Client[] = [];
  const client = async () => {
    const c = new pg.Client({ connectionString: thread.url });
    await c.connect();
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    thread = startPGliteThread('memory://');
    starting = startEmbeddedDatabase(thread, { migrate: true });
    await starting.ready;
    db = starting.database;
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    await db.close();
  });

  it('is migrated and serves the Prisma client, the SQL reader and errors as PostgreSQL does', async () => {
    const user = await db.prisma.user.create({ data: { name: 'Ada', email: 'ada@example.com' } });
    expect(await db.sql.rows('SELECT name FROM users WHERE id = $1', [user.id])).toEqual([{ name: 'Ada' }]);
    await expect(db.prisma.user.create({ data: { name: 'Again', email: 'ada@example.com' } })).rejects.toMatchObject({ code: 'P2002' });
    expect(db.poolStats()).toMatchObject({ max: 1 });
  });

  it('answers many concurrent statements through its one connection, each with its own result', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => i);
    const results = await Promise.all(ids.map((i) => db.sql.rows<{ n: number }>('SELECT $1::int * 2 AS n', [i])));
    expect(results.map((rows) => rows[0]!.n)).toEqual(ids.map((i) => i * 2));
  });

  it('keeps an open transaction to the connection that opened it: another connection waits, then sees only what was committed', async () => {
    const a = await client();
    const b = await client();
    await a.query('BEGIN');
    await a.query(`INSERT INTO users (name, email, updated_at) VALUES ('Tx', 'tx@example.com', now())`);
    let bDone = false;
    const bRead = b.query(`SELECT count(*)::int AS n FROM users WHERE email = 'tx@example.com'`).then((result) => {
      bDone = true;
      return result.rows[0].n as number;
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(bDone).toBe(false); // not interleaved into a's transaction
    await a.query('SELECT 1'); // a goes on while b waits
    await a.query('COMMIT');
    expect(await bRead).toBe(1);
  });

  it('attack: a client that vanishes inside its transaction has it rolled back, and nobody is left waiting', async () => {
    const a = await client();
    a.on('error', () => undefined); // its own connection's end, which this test causes
    await a.query('BEGIN');
    await a.query(`INSERT INTO users (name, email, updated_at) VALUES ('Ghost', 'ghost@example.com', now())`);
    // The socket dies without COMMIT or Terminate (a killed process): the server sees only the close.
    (a as unknown as { connection: { stream: net.Socket } }).connection.stream.destroy();
    const other = await client();
    const { rows } = await other.query(`SELECT count(*)::int AS n FROM users WHERE email = 'ghost@example.com'`);
    expect(rows[0].n).toBe(0);
    expect(await db.sql.rows('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('attack: bytes that are not the PostgreSQL protocol close that connection only', async () => {
    const socketPath = path.join(socketDirOf(thread), '.s.PGSQL.5432');
    const closed = await new Promise<boolean>((resolve) => {
      const socket = net.connect(socketPath, () => socket.write(Buffer.from([0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0]))); // a 2 GB "message"
      socket.on('close', () => resolve(true)).on('error', () => undefined);
      setTimeout(() => resolve(false), 3_000);
    });
    expect(closed).toBe(true);
    expect(await db.sql.rows('SELECT 2 AS two')).toEqual([{ two: 2 }]);
  });

  it('answers a request for TLS with N (none here), as a PostgreSQL server without TLS does', async () => {
    const socketPath = path.join(socketDirOf(thread), '.s.PGSQL.5432');
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(socketPath, () => {
        const request = Buffer.alloc(8);
        request.writeInt32BE(8, 0);
        request.writeInt32BE(80877103, 4);
        socket.write(request);
      });
      socket.once('data', (data) => (resolve(data.toString('latin1')), socket.destroy())).on('error', reject);
    });
    expect(answer).toBe('N');
  });

  it('runs statements off the calling thread: a slow one does not stop its timers', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    await db.sql.rows('SELECT pg_sleep(0.5)');
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(20); // in-process PGlite would have blocked the event loop for the whole 0.5 s
  });

  it('serves a message split over many reads (a 2 MB parameter), keeping other connections out until its Sync', async () => {
    const other = await client();
    const big = 'x'.repeat(2_000_000);
    const [length, others] = await Promise.all([
      db.sql.rows<{ n: number }>('SELECT length($1::text) AS n', [big]),
      Promise.all(Array.from({ length: 20 }, (_, i) => other.query('SELECT $1::int AS i', [i]).then((result) => result.rows[0].i))),
    ]);
    expect(length).toEqual([{ n: 2_000_000 }]);
    expect(others).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('attack: a client that vanishes in the middle of an exchange that failed (no Sync yet) leaves the database usable', async () => {
    const socketPath = path.join(socketDirOf(thread), '.s.PGSQL.5432');
    const socket = net.connect(socketPath);
    await new Promise((resolve) => socket.once('connect', resolve));
    const startup = Buffer.concat([Buffer.from('user\0postgres\0database\0postgres\0\0')]);
    const header = Buffer.alloc(8);
    header.writeInt32BE(8 + startup.length, 0);
    header.writeInt32BE(196608, 4); // protocol 3.0
    socket.write(Buffer.concat([header, startup]));
    await new Promise((resolve) => socket.once('data', resolve)); // authentication ok … ready for query
    const query = Buffer.from('BEGIN; INSERT INTO nowhere VALUES (1)\0'); // fails: the backend now skips to a Sync
    const parse = Buffer.alloc(1 + 4 + 1 + query.length + 2);
    parse.write('P', 0);
    parse.writeInt32BE(parse.length - 1, 1);
    query.copy(parse, 6);
    socket.write(parse); // and no Sync: the client dies in the middle
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
    expect(await db.sql.rows('SELECT 3 AS three')).toEqual([{ three: 3 }]);
  });

  it('serves its socket from a directory only this user can enter', () => {
    expect(statSync(socketDirOf(thread)).mode & 0o777).toBe(0o700);
  });
});

describe('the embedded database thread on a data directory', () => {
  it('keeps data across a close and a reopen, removes its socket directory on close, and analyses itself as it opens', async () => {
    const dir = path.join(tempDir(), 'pglite');
    const thread = startPGliteThread(dir);
    const first = startEmbeddedDatabase(thread, { migrate: true });
    await first.ready;
    await first.database.prisma.user.create({ data: { name: 'Kept', email: 'kept@example.com' } });
    await first.database.close();
    expect(existsSync(socketDirOf(thread))).toBe(false);
    const again = startEmbeddedDatabase(dir, { migrate: true });
    await again.ready;
    expect(await again.database.prisma.user.count({ where: { email: 'kept@example.com' } })).toBe(1);
    // PGlite has no autovacuum: the planner's statistics of the rows written before come from the ANALYZE at open.
    await again.statistics;
    const analysed = await again.database.sql.rows<{ column: string }>(
      `SELECT attname AS "column" FROM pg_stats WHERE tablename = 'users' AND attname = 'email'`,
    );
    expect(analysed).toEqual([{ column: 'email' }]);
    await again.database.close();
  });

  it('stops cleanly while still opening: the directory is released and opens again with its data', async () => {
    const dir = path.join(tempDir(), 'pglite');
    const first = await createDatabase({ pgliteDir: dir });
    await first.prisma.user.create({ data: { name: 'Early', email: 'early@example.com' } });
    await first.close();
    const stoppedEarly = startPGliteThread(dir);
    await stoppedEarly.stop(); // before it listens: PGlite is closed once open, never cut in the middle of its close
    await expect(stoppedEarly.listening).resolves.toBeUndefined();
    expect(existsSync(socketDirOf(stoppedEarly))).toBe(false);
    const again = await createDatabase({ pgliteDir: dir });
    expect(await again.prisma.user.count({ where: { email: 'early@example.com' } })).toBe(1);
    await again.close();
  });

  it('keeps its socket path within what Unix sockets take, with a long TMPDIR (Node would cut it silently)', () => {
    const longTmp = path.join(tempDir(), 'a-long-temporary-directory-'.repeat(3));
    mkdirSync(longTmp, { recursive: true });
    const script = [
      "import { startPGliteThread } from './packages/db/src/embedded/pglite-thread.ts';",
      "const thread = startPGliteThread('memory://');",
      'await thread.listening;',
      "console.log(new URL(thread.url).searchParams.get('host'));",
      'await thread.stop();',
    ].join('\n');
    const socketDir = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: REPO_ROOT,
      env: { ...process.env, TMPDIR: longTmp },
      encoding: 'utf8',
    }).trim();
    expect(socketDir.startsWith('/tmp/users-posts-pglite-')).toBe(true);
    expect(Buffer.byteLength(path.join(socketDir, '.s.PGSQL.5432'))).toBeLessThanOrEqual(103);
  });

  it('fails to start on a directory PGlite cannot open, says why, and releases the directory', async () => {
    const dir = path.join(tempDir(), 'pglite');
    const thread = startPGliteThread(dir);
    await thread.listening;
    await thread.stop();
    writeFileSync(path.join(dir, 'PG_VERSION'), '9\n'); // a data directory of another PostgreSQL version
    const broken = startPGliteThread(dir);
    await expect(broken.listening).rejects.toThrow(`the embedded database at ${dir} cannot be opened: PGlite failed to initialize properly`);
    expect(existsSync(socketDirOf(broken))).toBe(false);
    await startPGliteThread(dir).stop(); // the lock was released: a new opener may take it
  });
});
