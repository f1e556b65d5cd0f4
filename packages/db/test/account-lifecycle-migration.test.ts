// The account-lifecycle migration on a database that has sign-ins already: a cookie session keeps working under a new
// public id (its secret's hash moves to secret_hash), each live refresh-token family becomes a `tokens` sign-in its
// tokens still belong to, and the tokens of dead families (revoked, expired) are dropped.
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { PGlite } from '@electric-sql/pglite';
import { PGLITE_EXTENSIONS } from '@users-posts/schema-engine-bridge/pglite-extensions';
import { applyMigrations, MIGRATIONS_DIR } from '../src/index.js';

const MIGRATION = '20261127080001_account_lifecycle';
let before: string;
let pglite: PGlite;

beforeAll(async () => {
  // The history up to the migration under test, applied to a fresh database.
  before = await mkdtemp(path.join(os.tmpdir(), 'users-posts-history-'));
  await cp(path.join(MIGRATIONS_DIR, 'migration_lock.toml'), path.join(before, 'migration_lock.toml'));
  for (const folder of (await readdir(MIGRATIONS_DIR)).filter((name) => /^\d{14}_/.test(name) && name < MIGRATION)) {
    await cp(path.join(MIGRATIONS_DIR, folder), path.join(before, folder), { recursive: true });
  }
  pglite = await PGlite.create({ extensions: PGLITE_EXTENSIONS });
  await applyMigrations({ pglite }, { migrationsDir: before });
});
afterAll(async () => {
  await pglite?.close();
  await rm(before, { recursive: true, force: true });
});

it('carries the cookie sessions and the live refresh-token families over as sign-ins', async () => {
  await pglite.exec(`
    INSERT INTO users (id, name, email, updated_at) VALUES (1, 'Ada', 'ada@example.com', now());
    INSERT INTO sessions (id, user_id, expires_at, created_at) VALUES ('hash-of-cookie-secret', 1, now() + interval '1 day', now() - interval '1 hour');
    INSERT INTO refresh_tokens (id, family_id, user_id, token_hash, expires_at, used_at, created_at) VALUES
      ('jti-1', 'family-live', 1, 'hash-1', now() + interval '6 days', now() - interval '10 minutes', now() - interval '2 hours'),
      ('jti-2', 'family-live', 1, 'hash-2', now() + interval '7 days', NULL, now() - interval '10 minutes'),
      ('jti-3', 'family-revoked', 1, 'hash-3', now() + interval '7 days', NULL, now());
    UPDATE refresh_tokens SET revoked_at = now() WHERE family_id = 'family-revoked';
  `);

  await applyMigrations({ pglite }, { migrationsDir: MIGRATIONS_DIR });

  const { rows: signIns } = await pglite.query<{ id: string; kind: string; secret_hash: string | null; user_id: number }>(
    'SELECT id, kind::text, secret_hash, user_id FROM sessions ORDER BY kind, id',
  );
  expect(signIns).toEqual([
    { id: expect.stringMatching(/^[0-9a-f-]{36}$/), kind: 'cookie', secret_hash: 'hash-of-cookie-secret', user_id: 1 },
    { id: 'family-live', kind: 'tokens', secret_hash: null, user_id: 1 },
  ]);
  const { rows: tokens } = await pglite.query<{ id: string }>('SELECT id FROM refresh_tokens ORDER BY id');
  expect(tokens.map((token) => token.id)).toEqual(['jti-1', 'jti-2']);
  // Every sign-in has its login time and last use; a refresh token cannot outlive its sign-in (cascade).
  const { rows: times } = await pglite.query<{ missing: number }>(
    'SELECT count(*)::int AS missing FROM sessions WHERE auth_time IS NULL OR last_used_at IS NULL',
  );
  expect(times).toEqual([{ missing: 0 }]);
  await pglite.exec(`DELETE FROM sessions WHERE id = 'family-live'`);
  expect((await pglite.query('SELECT id FROM refresh_tokens')).rows).toEqual([]);
});
