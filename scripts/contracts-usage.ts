// `pnpm contracts:usage export [--out contracts/usage.json] [--days 30]`: the usage the running servers recorded (table
// `contract_usage`, apps/api/src/plugins/contract-usage.ts) written as the usage file the contract gate reads
// (format `users-posts-usage/1`, docs/contracts-check.md "Usage").
//
// Reads the database the server uses: DATABASE_URL (PostgreSQL, shared by every instance: any time), else the embedded
// PGlite directory (PGLITE_DIR, else <DATA_DIR>/pglite, as the server finds it), which one process owns: export after stopping the server (a
// running one is named in the refusal). Its counts reach the table at most 10 s late, and all of them when it stops.
// The rows are read a page at a time and the file written as they come: the export's memory does not grow with the table.
import { createDatabase, databaseOptionsFromEnv, DirectoryLockedError, Prisma, type PrismaClient } from '@users-posts/db';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
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

/** Rows of the grouped record read per page of the export's cursors: what bounds its memory, whatever the table holds. */
export const EXPORT_PAGE_ROWS = 1000;
/** The export's one read transaction (its cursors live in it), bounded so that a stuck database does not hang CI. */
const EXPORT_TIMEOUT_MS = 600_000;
const DAY_MS = 86_400_000;
const dayOf = (date: Date) => date.toISOString().slice(0, 10);

type Transaction = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

function addTo(usage: ClientUsage, requests: number, lastSeen: string): void {
  usage.requests += requests;
  if (lastSeen > usage.lastSeen) usage.lastSeen = lastSeen;
}

/**
 * JSON written member by member exactly as `JSON.stringify(value, null, 2)` writes the whole value, for a value too
 * large to hold: objects are opened and closed in order, and small values (a client's usage) are written whole.
 * Written here (a few lines): the streaming JSON writers we know of stringify values they are given whole, or arrays.
 */
class JsonObjectWriter {
  private text = '';
  /** For each object open: whether it has a member yet. */
  private readonly open: boolean[] = [];
  constructor(private readonly out: Writable) {}

  /** Opens an object: the top one (no name), or a member of the one open. */
  begin(name?: string): void {
    this.key(name);
    this.text += '{';
    this.open.push(false);
  }

  end(): void {
    const hadMembers = this.open.pop();
    this.text += hadMembers ? `\n${'  '.repeat(this.open.length)}}` : '}';
  }

  member(name: string, value: unknown): void {
    this.key(name);
    this.text += JSON.stringify(value, null, 2).replaceAll('\n', `\n${'  '.repeat(this.open.length)}`);
  }

  /** Hands what is written so far to the stream, waiting while the stream's buffer is full. */
  async drain(): Promise<void> {
    const text = this.text;
    this.text = '';
    if (text && !this.out.write(text)) await once(this.out, 'drain');
  }

  private key(name: string | undefined): void {
    const depth = this.open.length;
    if (depth === 0) return;
    this.text += `${this.open[depth - 1] ? ',' : ''}\n${'  '.repeat(depth)}${JSON.stringify(name)}: `;
    this.open[depth - 1] = true;
  }
}

/** The rows of `query`, a page at a time, through a cursor of the transaction: the database sorts, we hold one page. */
async function* pages<T>(tx: Transaction, cursor: string, query: Prisma.Sql, pageRows: number, onPage: () => void): AsyncGenerator<T[]> {
  await tx.$executeRaw(Prisma.sql`DECLARE ${Prisma.raw(cursor)} NO SCROLL CURSOR FOR ${query}`);
  for (;;) {
    const rows = await tx.$queryRaw<T[]>(Prisma.sql`FETCH FORWARD ${Prisma.raw(String(pageRows))} FROM ${Prisma.raw(cursor)}`);
    onPage();
    if (rows.length > 0) yield rows;
    if (rows.length < pageRows) break;
  }
  await tx.$executeRaw(Prisma.sql`CLOSE ${Prisma.raw(cursor)}`);
}

interface RestRow {
  kind: string;
  coordinate: string;
  client: string;
  requests: bigint;
  last_seen: string;
}

interface GraphQLRow {
  coordinate: string;
  client: string;
  operation: string;
  requests: bigint;
  last_seen: string;
}

/** What an export wrote: the REST operations and GraphQL coordinates it names, and the pages it read. */
export interface ExportSummary {
  restOperations: number;
  graphqlCoordinates: number;
  pages: number;
}

/** REST rows in the file's order, written as they come: by operation, its clients, then its parameters and theirs. */
async function writeRest(json: JsonObjectWriter, rows: AsyncIterable<RestRow[]>, summary: ExportSummary): Promise<void> {
  let operation: string | undefined;
  /** The parameter open, once the operation's clients are closed. */
  let parameter: string | undefined;
  const endOperation = () => {
    if (operation === undefined) return;
    if (parameter === undefined) {
      json.end(); // its clients
      json.begin('parameters');
    } else json.end(); // its last parameter
    json.end(); // its parameters
    json.end();
  };
  for await (const page of rows) {
    for (const row of page) {
      const at = row.kind === 'rest' ? row.coordinate.length : row.coordinate.indexOf('?');
      const operationId = row.coordinate.slice(0, at);
      if (operationId !== operation) {
        endOperation();
        json.begin(operationId);
        json.begin('clients');
        operation = operationId;
        parameter = undefined;
        summary.restOperations++;
      }
      const usage: ClientUsage = { requests: Number(row.requests), lastSeen: row.last_seen };
      if (row.kind === 'rest-parameter') {
        const name = row.coordinate.slice(at + 1);
        if (name !== parameter) {
          json.end(); // the operation's clients, or the parameter before
          if (parameter === undefined) json.begin('parameters');
          json.begin(name);
          parameter = name;
        }
      }
      json.member(row.client, usage);
    }
    await json.drain();
  }
  endOperation();
}

/** GraphQL rows in the file's order: by coordinate, its clients, each with its requests, last day and operations. */
async function writeGraphQL(json: JsonObjectWriter, rows: AsyncIterable<GraphQLRow[]>, summary: ExportSummary): Promise<void> {
  let coordinate: string | undefined;
  // One client's operations are held until its last row (the file gives its sums first): the operation names the
  // recorder admits bound them.
  let client: { name: string; usage: ClientUsage & { operations: string[] } } | undefined;
  const endClient = () => {
    if (client) json.member(client.name, client.usage);
    client = undefined;
  };
  const endCoordinate = () => {
    endClient();
    if (coordinate === undefined) return;
    json.end(); // its clients
    json.end();
  };
  for await (const page of rows) {
    for (const row of page) {
      if (row.coordinate !== coordinate) {
        endCoordinate();
        json.begin(row.coordinate);
        json.begin('clients');
        coordinate = row.coordinate;
        summary.graphqlCoordinates++;
      }
      if (row.client !== client?.name) {
        endClient();
        client = { name: row.client, usage: { requests: 0, lastSeen: row.last_seen, operations: [] } };
      }
      addTo(client.usage, Number(row.requests), row.last_seen);
      // In order and once each: the rows are grouped by operation and sorted by it.
      client.usage.operations.push(row.operation);
    }
    await json.drain();
  }
  endCoordinate();
}

/**
 * Writes the usage seen within `days` days before `now` (UTC days, `now`'s included) as the usage file: JSON, two-space
 * indented, a final newline, keys in order so that the file diffs well between exports. The grouped rows are read
 * through cursors in the file's order, `pageRows` at a time, and written as they come, so memory holds a page (and one
 * client's operation names) whatever the table holds. Written beside `file`, then renamed over it: an export that fails
 * leaves the last file whole.
 */
export async function exportUsage(
  prisma: PrismaClient,
  file: string,
  { days = 30, now = new Date(), pageRows = EXPORT_PAGE_ROWS }: { days?: number; now?: Date; pageRows?: number } = {},
): Promise<ExportSummary> {
  if (!Number.isSafeInteger(pageRows) || pageRows < 1) throw new Error(`pageRows: a positive integer, not ${pageRows}`);
  const since = dayOf(new Date(now.getTime() - (days - 1) * DAY_MS));
  const until = dayOf(now);
  const summary: ExportSummary = { restOperations: 0, graphqlCoordinates: 0, pages: 0 };
  const onPage = () => summary.pages++;
  // The database orders as the file does: byte order ("C"), which is JavaScript's for these names (ASCII: operation
  // ids, schema coordinates, parameter, client and operation names).
  const rest = Prisma.sql`
    SELECT kind, coordinate, client, sum(requests)::bigint AS requests, to_char(max(day), 'YYYY-MM-DD') AS last_seen
    FROM contract_usage
    WHERE day >= ${since}::date AND day <= ${until}::date
      AND (kind = 'rest' OR (kind = 'rest-parameter' AND strpos(coordinate, '?') > 0))
    GROUP BY kind, coordinate, client
    ORDER BY split_part(coordinate, '?', 1) COLLATE "C", kind COLLATE "C", coordinate COLLATE "C", client COLLATE "C"`;
  const graphql = Prisma.sql`
    SELECT coordinate, client, operation, sum(requests)::bigint AS requests, to_char(max(day), 'YYYY-MM-DD') AS last_seen
    FROM contract_usage
    WHERE day >= ${since}::date AND day <= ${until}::date AND kind = 'graphql'
    GROUP BY coordinate, client, operation
    ORDER BY coordinate COLLATE "C", client COLLATE "C", operation COLLATE "C"`;

  await mkdir(path.dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  const out = createWriteStream(partial);
  const json = new JsonObjectWriter(out);
  try {
    await prisma.$transaction(
      async (tx) => {
        json.begin();
        json.member('format', USAGE_FORMAT);
        json.member('exportedAt', now.toISOString());
        json.member('windowDays', days);
        json.begin('rest');
        await writeRest(json, pages<RestRow>(tx, 'usage_rest', rest, pageRows, onPage), summary);
        json.end();
        json.begin('graphql');
        await writeGraphQL(json, pages<GraphQLRow>(tx, 'usage_graphql', graphql, pageRows, onPage), summary);
        json.end();
        json.end();
        await json.drain();
      },
      { timeout: EXPORT_TIMEOUT_MS, maxWait: 30_000 },
    );
    out.end('\n');
    await finished(out);
    await rename(partial, file);
  } catch (error) {
    out.destroy();
    await rm(partial, { force: true });
    throw error;
  }
  return summary;
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
    const { restOperations, graphqlCoordinates } = await exportUsage(database.prisma, out, { days });
    console.log(
      `wrote ${path.relative(repoRoot, out)}: ${restOperations} REST operations and ${graphqlCoordinates} GraphQL coordinates used within ${days} days`,
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
