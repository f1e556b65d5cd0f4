// The scale bench's data: N users × 10 posts written by generate_series on a migrated database (PostgreSQL or PGlite),
// its indexes built after the load (and timed: the figures of an upgrade in place), then fresh planner statistics.
import { readMigrations } from '@users-posts/db';
import { createHash } from 'node:crypto';

/** Runs one statement (or a script) and returns its rows: a pg client's or a PGlite's `query`. */
export type Query = <Row = Record<string, unknown>>(text: string) => Promise<{ rows: Row[] }>;

export interface ScaleSize {
  users: number;
  postsPerUser: number;
}

export interface SeedReport {
  /** Seconds spent writing the rows. */
  loadSeconds: number;
  /** Each index the migrations declare on users and posts, and the seconds its build took on the loaded table. */
  indexSeconds: { name: string; seconds: number }[];
}

/** What a kept database was seeded from: the size, and the migrations (a new migration means a fresh seed). */
export async function seedStamp(size: ScaleSize): Promise<string> {
  const { migrationDirectories } = await readMigrations();
  return createHash('sha256').update(JSON.stringify({ size, migrationDirectories })).digest('hex').slice(0, 16);
}

/** The stamp a kept database was seeded with, or null (not seeded, or seeding did not finish). */
export async function seededStamp(query: Query): Promise<string | null> {
  const { rows } = await query<{ stamp: string | null }>(
    `SELECT CASE WHEN to_regclass('bench_scale_seed') IS NULL THEN NULL ELSE (SELECT stamp FROM bench_scale_seed) END AS stamp`,
  );
  return rows[0]?.stamp ?? null;
}

const seconds = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e9;

/**
 * Fills a migrated, empty database. Users `user<n>` (every 10th without an age, every 1,000th an ADMIN, one every 30
 * seconds from 2024), each with `postsPerUser` posts spread over the authors; the indexes the migrations made on the
 * two tables are dropped for the load and built again after it, as `CREATE INDEX` on a populated table (what the
 * migration of issue 32 does to an existing database), each timed.
 */
export async function seedScale(query: Query, size: ScaleSize, stamp: string): Promise<SeedReport> {
  const started = process.hrtime.bigint();
  // Triggers (the row counts, recomputed below) and foreign-key checks off: the rows are consistent by construction.
  await query(`SET session_replication_role = replica`);
  const { rows: indexes } = await query<{ name: string; definition: string }>(
    `SELECT indexname AS name, indexdef AS definition FROM pg_indexes
     WHERE schemaname = 'public' AND tablename IN ('users', 'posts')
       AND indexname NOT IN (SELECT conname FROM pg_constraint) ORDER BY tablename DESC, indexname`,
  );
  for (const { name } of indexes) await query(`DROP INDEX "${name}"`);
  await query(
    `INSERT INTO users (id, name, email, age, role, created_at, updated_at)
     SELECT g, 'user' || g, 'user' || g || '@example.com',
            CASE WHEN g % 10 = 0 THEN NULL ELSE 18 + g % 70 END,
            CASE WHEN g % 1000 = 0 THEN 'ADMIN'::"Role" ELSE 'USER'::"Role" END,
            at, at
     FROM generate_series(1, ${size.users}) AS g, LATERAL (SELECT timestamp '2024-01-01' + g * interval '30 seconds' AS at) AS t`,
  );
  await query(
    `INSERT INTO posts (id, title, content, author_id, created_at, updated_at)
     SELECT g, 'Post ' || g || ' on topic ' || (g % 997), 'Body of post ' || g || ', about topic ' || (g % 997) || ' and more',
            1 + g % ${size.users}, at, at
     FROM generate_series(1, ${size.users * size.postsPerUser}) AS g,
          LATERAL (SELECT timestamp '2024-01-01' + g * interval '3 seconds' AS at) AS t`,
  );
  await query(`SELECT setval('users_id_seq', ${size.users}), setval('posts_id_seq', ${size.users * size.postsPerUser})`);
  await query(`RESET session_replication_role`);
  await query(
    `UPDATE row_counts SET rows = CASE WHEN slot = 0 THEN (SELECT count(*) FROM users) ELSE 0 END WHERE table_name = 'users';
     UPDATE row_counts SET rows = CASE WHEN slot = 0 THEN (SELECT count(*) FROM posts) ELSE 0 END WHERE table_name = 'posts'`,
  );
  const loadSeconds = seconds(started);
  const indexSeconds: SeedReport['indexSeconds'] = [];
  for (const { name, definition } of indexes) {
    const building = process.hrtime.bigint();
    await query(definition);
    indexSeconds.push({ name, seconds: seconds(building) });
  }
  await query(`VACUUM ANALYZE users`);
  await query(`VACUUM ANALYZE posts`);
  await query(`CREATE TABLE bench_scale_seed (stamp text NOT NULL)`);
  await query(`INSERT INTO bench_scale_seed VALUES ('${stamp}')`);
  return { loadSeconds, indexSeconds };
}
