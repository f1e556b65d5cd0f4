// The standard Prisma CLI (migrate deploy / status) through prisma/prisma.config.ts and the WASM engine bridge.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const PRISMA = fileURLToPath(new URL('../node_modules/.bin/prisma', import.meta.url));

/** Run `prisma <args> --config prisma/prisma.config.ts` from the repository root with `env` over a clean environment. */
function prisma(args: string[], env: Record<string, string>): Promise<{ code: number; output: string }> {
  const { DATABASE_URL: _url, PGLITE_DIR: _dir, PRISMA_SCHEMA_ENGINE_BINARY: _bin, ...base } = process.env;
  return new Promise((resolve) => {
    execFile(PRISMA, [...args, '--config', 'prisma/prisma.config.ts'], { cwd: REPO, env: { ...base, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}\n${stderr}` });
    });
  });
}

describe('prisma CLI on an embedded PGlite directory', () => {
  let dir: string;
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('migrate deploy creates and migrates the directory; migrate status reports it up to date', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'users-posts-cli-'));
    const env = { PGLITE_DIR: path.join(dir, 'pglite') };
    const deploy = await prisma(['migrate', 'deploy'], env);
    expect(deploy).toMatchObject({ code: 0 });
    expect(deploy.output).toMatch(/All migrations have been successfully applied/);
    const again = await prisma(['migrate', 'deploy'], env);
    expect(again.output).toMatch(/No pending migrations to apply/);
    const status = await prisma(['migrate', 'status'], env);
    expect(status).toMatchObject({ code: 0 });
    expect(status.output).toMatch(/Database schema is up to date!/);
  }, 240_000); // three CLI processes, each loading the WASM engine and PGlite: 30 s alone, over 60 s on a loaded CI machine
});

const describePg = process.env.DATABASE_URL ? describe : describe.skip;

describePg('prisma CLI on PostgreSQL (DATABASE_URL)', () => {
  const server = process.env.DATABASE_URL ?? '';
  const name = `users_posts_cli_${process.pid}_${Date.now()}`;
  const url = () => Object.assign(new URL(server), { pathname: `/${name}` }).href; // describe bodies run even when skipped
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: server });
    await client.connect();
    try {
      return await client.query(sql);
    } finally {
      await client.end();
    }
  };
  afterAll(() => admin(`DROP DATABASE IF EXISTS "${name}"`));

  it('migrate deploy creates and migrates a fresh database; migrate status reports it up to date', async () => {
    const env = { DATABASE_URL: url() };
    const deploy = await prisma(['migrate', 'deploy'], env);
    expect(deploy).toMatchObject({ code: 0 });
    expect(deploy.output).toMatch(new RegExp(`PostgreSQL database ${name} created`));
    expect(deploy.output).toMatch(/All migrations have been successfully applied/);
    const status = await prisma(['migrate', 'status'], env);
    expect(status).toMatchObject({ code: 0 });
    expect(status.output).toMatch(/Database schema is up to date!/);
    // No shadow databases left behind by the bridge.
    const { rows } = await admin(`SELECT datname FROM pg_database WHERE datname LIKE 'prisma_migrate_shadow_db_%'`);
    expect(rows).toEqual([]);
  });
});
