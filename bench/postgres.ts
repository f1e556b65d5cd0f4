// The bench's PostgreSQL: DATABASE_URL when set, else a throwaway local cluster (initdb in a temp dir, loopback, free port).
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './servers.js';

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface BenchPostgres {
  /** An admin URL on the server (database `postgres`): the bench creates and drops its databases through it. */
  adminUrl: string;
  /** `throwaway` when the bench started the cluster itself. */
  origin: 'throwaway' | 'DATABASE_URL';
  /** `PostgreSQL 15.x …` as the server reports it. */
  version: string;
  stop(): Promise<void>;
}

/** Run a PostgreSQL binary, as the `postgres` user when we are root (initdb and postgres refuse to run as root). */
function pgCommand(binary: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const [command, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path.join(PG_BIN, binary), ...args]] : [path.join(PG_BIN, binary), args];
  execFileSync(command, argv, { stdio: ['ignore', 'ignore', 'inherit'] });
}

async function serverVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ version: string }>('SELECT version()');
    return rows[0]!.version.split(' on ')[0]!;
  } finally {
    await client.end();
  }
}

/**
 * A local cluster: no fsync (nothing here needs to survive a crash), pg_stat_statements loaded for the statement counts.
 * In a fresh temporary directory removed at stop (throwaway), or in `keptDir`, created once and kept between runs (the
 * scale bench's million-row databases take minutes to seed).
 */
async function startLocal(keptDir?: string): Promise<BenchPostgres> {
  const dir = keptDir ?? mkdtempSync(path.join(os.tmpdir(), 'users-posts-bench-pg-'));
  const data = path.join(dir, 'data');
  if (keptDir) mkdirSync(keptDir, { recursive: true });
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    chownSync(dir, uid, gid);
  }
  if (!existsSync(path.join(data, 'PG_VERSION'))) {
    pgCommand('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-sync']);
  }
  const port = await freePort();
  const options = [
    `-p ${port}`,
    "-c listen_addresses='127.0.0.1'",
    `-c unix_socket_directories='${dir}'`,
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    '-c shared_preload_libraries=pg_stat_statements',
    '-c pg_stat_statements.track=top',
    '-c max_connections=200',
    // The scale bench's tables (10 M posts) are measured with their indexes in memory, as a production server holds them.
    ...(keptDir ? ['-c shared_buffers=2GB', '-c maintenance_work_mem=1GB', '-c max_wal_size=8GB'] : []),
  ].join(' ');
  pgCommand('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'postgres.log'), '-w', '-s', 'start']);
  let stopped = false;
  const stopNow = () => {
    if (stopped) return;
    stopped = true;
    try {
      pgCommand('pg_ctl', ['-D', data, '-m', keptDir ? 'fast' : 'immediate', '-w', '-s', 'stop']);
    } finally {
      if (!keptDir) rmSync(dir, { recursive: true, force: true });
    }
  };
  // An interrupted bench (Ctrl-C) must not leave a postgres behind.
  const onSignal = () => {
    stopNow();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    adminUrl,
    origin: 'throwaway',
    version: await serverVersion(adminUrl),
    async stop() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      stopNow();
    },
  };
}

/** The server of DATABASE_URL (its own database is left alone: the bench creates fresh ones next to it), else a throwaway cluster. */
export async function benchPostgres(options: { keptDir?: string } = {}): Promise<BenchPostgres> {
  const given = process.env.DATABASE_URL;
  if (!given) return startLocal(options.keptDir);
  return { adminUrl: given, origin: 'DATABASE_URL', version: await serverVersion(given), stop: async () => {} };
}

/** A fresh, empty database on the server; returns its URL and a function dropping it. */
export async function freshDatabase(adminUrl: string, name: string): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
