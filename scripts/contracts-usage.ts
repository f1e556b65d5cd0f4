// `pnpm contracts:usage export [--out contracts/usage.json] [--days 30]`: the usage the running servers recorded (table
// `contract_usage`, apps/api/src/plugins/contract-usage.ts) written as the usage file the contract gate reads
// (format `users-posts-usage/1`, docs/contracts-check.md "Usage").
//
// Reads the database the server uses: DATABASE_URL (PostgreSQL, shared by every instance: any time), else the embedded
// PGlite directory (PGLITE_DIR, else <DATA_DIR>/pglite, as the server finds it), which one process owns: export after stopping the server (a
// running one is named in the refusal). Its counts reach the table at most 10 s late, and all of them when it stops.
import { createDatabase, databaseOptionsFromEnv, DirectoryLockedError, type PrismaClient } from '@users-posts/db';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { dataDirectories } from '../apps/api/src/paths.js';

export const USAGE_FORMAT = 'users-posts-usage/1';

export interface ClientUsage {
  requests: number;
  lastSeen: string;
}

export interface UsageFile {
  format: typeof USAGE_FORMAT;
  exportedAt: string;
  windowDays: number;
  rest: Record<string, { clients: Record<string, ClientUsage>; parameters: Record<string, Record<string, ClientUsage>> }>;
  graphql: Record<string, { clients: Record<string, ClientUsage & { operations: string[] }> }>;
}

interface Row {
  kind: string;
  coordinate: string;
  client: string;
  operation: string;
  requests: bigint;
  last_seen: Date | string;
}

const DAY_MS = 86_400_000;
const dayOf = (date: Date) => date.toISOString().slice(0, 10);

/** Keys in order, so that the file diffs well between exports. */
function sorted<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function addTo(usage: ClientUsage, requests: number, lastSeen: string): void {
  usage.requests += requests;
  if (lastSeen > usage.lastSeen) usage.lastSeen = lastSeen;
}

/** The usage seen within `days` days before `now` (UTC days, `now`'s included). */
export async function readUsage(prisma: PrismaClient, { days = 30, now = new Date() }: { days?: number; now?: Date } = {}): Promise<UsageFile> {
  const since = dayOf(new Date(now.getTime() - (days - 1) * DAY_MS));
  const rows = await prisma.$queryRaw<Row[]>`
    SELECT kind, coordinate, client, operation, sum(requests)::bigint AS requests, max(day) AS last_seen
    FROM contract_usage WHERE day >= ${since}::date AND day <= ${dayOf(now)}::date
    GROUP BY kind, coordinate, client, operation`;
  const rest: UsageFile['rest'] = {};
  const graphql: UsageFile['graphql'] = {};
  for (const row of rows) {
    const requests = Number(row.requests);
    const lastSeen = row.last_seen instanceof Date ? dayOf(row.last_seen) : String(row.last_seen).slice(0, 10);
    if (row.kind === 'rest') {
      const entry = (rest[row.coordinate] ??= { clients: {}, parameters: {} });
      addTo((entry.clients[row.client] ??= { requests: 0, lastSeen }), requests, lastSeen);
    } else if (row.kind === 'rest-parameter') {
      const at = row.coordinate.indexOf('?');
      const entry = (rest[row.coordinate.slice(0, at)] ??= { clients: {}, parameters: {} });
      const parameter = (entry.parameters[row.coordinate.slice(at + 1)] ??= {});
      addTo((parameter[row.client] ??= { requests: 0, lastSeen }), requests, lastSeen);
    } else if (row.kind === 'graphql') {
      const entry = (graphql[row.coordinate] ??= { clients: {} });
      const client = (entry.clients[row.client] ??= { requests: 0, lastSeen, operations: [] });
      addTo(client, requests, lastSeen);
      client.operations.push(row.operation);
    }
  }
  for (const entry of Object.values(rest)) {
    entry.clients = sorted(entry.clients);
    entry.parameters = sorted(Object.fromEntries(Object.entries(entry.parameters).map(([name, clients]) => [name, sorted(clients)])));
  }
  for (const entry of Object.values(graphql)) {
    for (const client of Object.values(entry.clients)) client.operations = [...new Set(client.operations)].sort();
    entry.clients = sorted(entry.clients);
  }
  return { format: USAGE_FORMAT, exportedAt: now.toISOString(), windowDays: days, rest: sorted(rest), graphql: sorted(graphql) };
}

/** Writes the usage file (JSON, two-space indented, a final newline). */
export async function writeUsageFile(file: string, usage: UsageFile): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(usage, null, 2)}\n`);
}

const USAGE = 'usage: pnpm contracts:usage export [--out contracts/usage.json] [--days 30]';

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { out: { type: 'string', default: 'contracts/usage.json' }, days: { type: 'string', default: '30' } },
  });
  const days = Number(values.days);
  if (positionals[0] !== 'export' || positionals.length !== 1 || !Number.isInteger(days) || days < 1) throw new Error(USAGE);
  const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const out = path.resolve(repoRoot, values.out);
  const fromEnv = databaseOptionsFromEnv();
  const database = await createDatabase({
    ...fromEnv,
    ...(fromEnv.databaseUrl ? {} : { pgliteDir: dataDirectories(process.env).pgliteDir }),
    migrate: true,
  });
  try {
    const usage = await readUsage(database.prisma, { days });
    await writeUsageFile(out, usage);
    console.log(
      `wrote ${path.relative(repoRoot, out)}: ${Object.keys(usage.rest).length} REST operations and ${Object.keys(usage.graphql).length} GraphQL coordinates used within ${days} days`,
    );
  } finally {
    await database.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    await main(process.argv.slice(2));
  } catch (error) {
    // The expected refusals (usage, a server holding the embedded database) are one line, not a stack trace.
    console.error(error instanceof DirectoryLockedError || (error instanceof Error && error.message === USAGE) ? error.message : error);
    process.exitCode = 1;
  }
}
