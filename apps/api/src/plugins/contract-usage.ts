// Usage of the contracts recorded by the running server (SPEC §6): requests per REST operation and query parameter, per
// GraphQL schema coordinate and operation, per client, counted in memory per UTC day and added to `contract_usage` every
// few seconds; bounded by construction (SPEC §0.2): new names and new rows per day and per address, days past the window deleted.
import { Prisma, type PrismaClient } from '@users-posts/db';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import {
  getOperationAST,
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type ASTNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Principal } from '../auth/principal.js';
import { configDefault } from '../config/config-schema.js';
import { loadOpenapi } from '../contract/openapi-contract.js';
import { clientAddress } from '../http/client-address.js';

declare module 'fastify' {
  interface FastifyInstance {
    contractUsage: ContractUsage;
  }
}

export interface ContractUsage {
  /** The GraphQL door's envelop plugin (graphql/plugin.ts): counts every executed or subscribed operation. */
  graphqlPlugin: Plugin;
  /** Adds the counts so far to the database now (also every flush interval and at close). */
  flush(): Promise<void>;
  /** Deletes the days past the retention window now (also at start and every hour); resolves to the rows deleted. */
  retain(): Promise<number>;
  /** Begins the start's work in the background (the names already recorded read, the first retention): last of the start. */
  start(): void;
  /** That work, for tests. */
  started: Promise<void>;
}

/** `kind` of the rows (prisma/schema.prisma `ContractUsage`). */
export const USAGE_KIND = { rest: 'rest', restParameter: 'rest-parameter', graphql: 'graphql' } as const;
/** The operation name recorded for an unnamed GraphQL operation, and for a name beyond the bounds. */
export const ANONYMOUS_OPERATION = 'anonymous-operation';
/** SPEC §6: a client's `X-Client-Name`, when well-formed; anything else is ignored. */
export const CLIENT_NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** The client recorded for a request that names none. */
export const ANONYMOUS_CLIENT = 'anonymous';
/**
 * The client recorded for a name beyond the bounds (SPEC §6 `name:other`): it holds ':', which CLIENT_NAME refuses, so
 * no `X-Client-Name` is ever recorded as it.
 */
export const OVERFLOW_CLIENT = 'name:other';
/**
 * The operation name is the caller's to invent too, and part of every row's key: names longer than this are recorded as
 * ANONYMOUS_OPERATION (a key of kilobytes is over PostgreSQL's index row limit, and one such row failed every flush
 * after it).
 */
export const MAX_OPERATION_NAME = 128;
/**
 * Rows whose client and operation are both fixed labels (`anonymous` or `name:other`, and no operation or
 * `anonymous-operation`): two per REST operation, declared query parameter and GraphQL schema coordinate, so a set the
 * contract bounds (usage-bounds.test.ts checks the contract's count stays under it). They cost no row budget: what
 * goes beyond the bounds is counted there.
 */
export const FIXED_ROWS_MAX = 2048;
/** Days of counts kept in memory while the database is unreachable (today and the days before): older ones are dropped. */
const MAX_PENDING_DAYS = 3;
const DEFAULT_FLUSH_INTERVAL_MS = 10_000;
const RETENTION_INTERVAL_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Rows per upsert statement: the row bound of a day may be passed by this many per instance flushing at the same moment. */
export const CHUNK = 2000;

/** The bounds of the record (config/config-schema.ts `CONTRACT_USAGE_*`, where each default is written once). */
export interface UsageBounds {
  /** Days kept, today's included: older rows are deleted, and names not seen within them are forgotten. */
  retentionDays: number;
  /** New client names, and new operation names, each instance admits a day (names already recorded are not new). */
  newNamesPerDay: number;
  /** New client names, and new operation names, one client address may add a day. */
  newNamesPerAddress: number;
  /** Rows a day may add to the table, all instances together (counted in the flush's statement). */
  rowsPerDay: number;
  /** Rows one client address may add a day. */
  rowsPerAddress: number;
}

export const DEFAULT_USAGE_BOUNDS: UsageBounds = {
  retentionDays: configDefault('CONTRACT_USAGE_RETENTION_DAYS'),
  newNamesPerDay: configDefault('CONTRACT_USAGE_NEW_NAMES_PER_DAY'),
  newNamesPerAddress: configDefault('CONTRACT_USAGE_NEW_NAMES_PER_ADDRESS'),
  rowsPerDay: configDefault('CONTRACT_USAGE_ROWS_PER_DAY'),
  rowsPerAddress: configDefault('CONTRACT_USAGE_ROWS_PER_ADDRESS'),
};

/** The variables the bounds are read from, named in the stores' declarations. */
const BOUND_VARIABLES = [
  'CONTRACT_USAGE_RETENTION_DAYS',
  'CONTRACT_USAGE_NEW_NAMES_PER_DAY',
  'CONTRACT_USAGE_NEW_NAMES_PER_ADDRESS',
  'CONTRACT_USAGE_ROWS_PER_DAY',
  'CONTRACT_USAGE_ROWS_PER_ADDRESS',
] as const;

/** What one GraphQL operation of one document touches, worked out once per parsed document (Yoga caches those). */
interface Shape {
  operation: string;
  coordinates: readonly string[];
}

/**
 * The schema coordinates an operation selects (`Type.field`) and the arguments it passes (`Type.field(arg:)`),
 * through the fragments it spreads; introspection fields are not part of the contract and are left out.
 */
export function operationCoordinates(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): Shape | undefined {
  const operation = getOperationAST(document, operationName);
  if (!operation) return undefined;
  // bound: this call's, over one parsed document (its fragments, coordinates and spreads), whose size the limits bound
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const coordinates = new Set<string>(); // bound: as above
  const pending: ASTNode[] = [operation];
  const spread = new Set<string>(); // bound: as above
  while (pending.length > 0) {
    const typeInfo = new TypeInfo(schema);
    visit(
      pending.pop()!,
      visitWithTypeInfo(typeInfo, {
        Field() {
          const parent = typeInfo.getParentType();
          const field = typeInfo.getFieldDef();
          if (parent && field && !parent.name.startsWith('__') && !field.name.startsWith('__')) coordinates.add(`${parent.name}.${field.name}`);
        },
        Argument() {
          const parent = typeInfo.getParentType();
          const field = typeInfo.getFieldDef();
          const argument = typeInfo.getArgument();
          if (parent && field && argument && !typeInfo.getDirective() && !parent.name.startsWith('__') && !field.name.startsWith('__'))
            coordinates.add(`${parent.name}.${field.name}(${argument.name}:)`);
        },
        FragmentSpread(node) {
          const fragment = fragments.get(node.name.value);
          if (fragment && !spread.has(node.name.value)) {
            spread.add(node.name.value);
            pending.push(fragment);
          }
        },
      }),
    );
  }
  const name = operation.name?.value;
  return { operation: name !== undefined && name.length <= MAX_OPERATION_NAME ? name : ANONYMOUS_OPERATION, coordinates: [...coordinates] };
}

// bound: one entry per account, at most 100 000 (checked where it is filled); beyond, the label is built each time.
const userClients = new Map<number, string>();

/** SPEC §6's client: the API key's owner, else the well-formed `X-Client-Name`, else `anonymous` (never an e-mail). */
export function clientOf(principal: Principal | undefined, clientName: string | string[] | undefined): string {
  if (principal?.kind === 'user' && principal.via === 'api_key') {
    let client = userClients.get(principal.userId);
    if (client === undefined) {
      client = `user:${principal.userId}`;
      if (userClients.size < 100_000) userClients.set(principal.userId, client);
    }
    return client;
  }
  return typeof clientName === 'string' && CLIENT_NAME.test(clientName) ? clientName : ANONYMOUS_CLIENT;
}

/** One row of the table as counted: its four key columns (the day is the tally's), and them joined, its key in memory. */
export interface RowKey {
  key: string;
  kind: string;
  coordinate: string;
  client: string;
  operation: string;
}

export function rowKey(kind: string, coordinate: string, client: string, operation: string): RowKey {
  return { key: `${kind}\u0000${coordinate}\u0000${client}\u0000${operation}`, kind, coordinate, client, operation };
}

export interface PendingRow extends RowKey {
  requests: number;
}

/** The fixed labels' rows (FIXED_ROWS_MAX): where what passes a bound is counted, without a budget of their own. */
const isFixed = (client: string, operation: string) =>
  (client === ANONYMOUS_CLIENT || client === OVERFLOW_CLIENT) && (operation === '' || operation === ANONYMOUS_OPERATION);
/** The caller's own names (an `X-Client-Name`): the ones the name bounds apply to. API keys' owners are one per account. */
const isInventedClient = (client: string) => client !== ANONYMOUS_CLIENT && !client.startsWith('user:');
const isInventedOperation = (operation: string) => operation !== '' && operation !== ANONYMOUS_OPERATION;

/** One UTC day's counts, row by row, until a flush adds them to the table. */
class Tally {
  // bound: the day's admitted rows and the fixed labels' rows (UsageBook.admit adds no other key)
  readonly rows = new Map<string, PendingRow>();
  constructor(readonly day: string) {}

  add(rows: readonly RowKey[], requests = 1): void {
    for (const row of rows) {
      const pending = this.rows.get(row.key);
      if (pending) pending.requests += requests;
      else this.rows.set(row.key, { ...row, requests });
    }
  }
}

/** Names recorded within the retention window (clients or operations), with the last day each was recorded on. */
class KnownNames {
  // bound: `max` names (the retention days × the new names per day), checked by the callers (`full`) and by merge()
  private readonly lastDay = new Map<string, string>();
  constructor(private readonly max: number) {}

  get size(): number {
    return this.lastDay.size;
  }

  get full(): boolean {
    return this.lastDay.size >= this.max;
  }

  has(name: string): boolean {
    return this.lastDay.has(name);
  }

  /** Recorded on `day` (a name already known, or one just admitted). */
  seen(name: string, day: string): void {
    this.lastDay.set(name, day);
  }

  /** A name the table holds (read at start): known, unless the bound is reached. */
  merge(name: string, day: string): void {
    const known = this.lastDay.get(name);
    if (known === undefined ? !this.full : known < day) this.lastDay.set(name, day);
  }

  forgetBefore(day: string): void {
    for (const [name, last] of this.lastDay) if (last < day) this.lastDay.delete(name);
  }
}

/** What one address added on one day. */
interface AddressShare {
  clients: number;
  operations: number;
  rows: number;
}

/** What one UTC day admitted on this instance: new names (in all and per address), and the rows counted. */
class DayLedger {
  newClients = 0;
  newOperations = 0;
  // bound: an entry per address that added a name or a row today, so at most the day's rows and new names
  readonly addresses = new Map<string, AddressShare>();
  // bound: rowsPerDay keys (UsageBook.admit adds none beyond)
  readonly rows = new Set<string>();
  constructor(
    readonly day: string,
    /** When it ends (ms since the epoch). */
    readonly ends: number,
  ) {}
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The record in memory, bounded (SPEC §0.2): which names are known, what each day and address may still add, and the
 * counts waiting for a flush. No I/O: the plugin feeds it requests and flushes what it takes.
 */
export class UsageBook {
  readonly clients: KnownNames;
  readonly operations: KnownNames;
  private ledger: DayLedger;
  // bound: MAX_PENDING_DAYS days (giveBack() drops the oldest beyond), each a Tally
  private readonly pending = new Map<string, Tally>();
  private tally: Tally;

  constructor(
    readonly bounds: UsageBounds,
    private readonly now: () => number = Date.now,
  ) {
    const names = bounds.retentionDays * bounds.newNamesPerDay;
    this.clients = new KnownNames(names);
    this.operations = new KnownNames(names);
    this.ledger = this.dayAt(now());
    this.tally = this.tallyOf(this.ledger.day);
  }

  /** Entries held at most: the known names, a day's rows and addresses, and the days of counts waiting. */
  get maxEntries(): number {
    const { retentionDays, newNamesPerDay, rowsPerDay } = this.bounds;
    return 2 * retentionDays * newNamesPerDay + (rowsPerDay + 2 * newNamesPerDay) + rowsPerDay + MAX_PENDING_DAYS * (rowsPerDay + FIXED_ROWS_MAX);
  }

  get entries(): number {
    let pending = 0;
    for (const tally of this.pending.values()) pending += tally.rows.size;
    return this.clients.size + this.operations.size + this.ledger.addresses.size + this.ledger.rows.size + pending;
  }

  /** The first day kept: days before it are deleted from the table and their names forgotten. */
  firstKeptDay(): string {
    return dayOf(this.now() - (this.bounds.retentionDays - 1) * DAY_MS);
  }

  /** Today (UTC), starting a new day's ledger and tally when the last one has ended. */
  today(): string {
    if (this.now() >= this.ledger.ends) {
      this.ledger = this.dayAt(this.now());
      this.tally = this.tallyOf(this.ledger.day);
      const first = this.firstKeptDay();
      this.clients.forgetBefore(first);
      this.operations.forgetBefore(first);
    }
    return this.ledger.day;
  }

  /**
   * The rows one request is counted under: its own client and operation when they are known or within the bounds
   * (new names: the day's and the address's; new rows: the same), else the fixed labels. `rowsOf` gives the request's
   * rows for a client and an operation (`''` for REST). Admitting names and rows is what spends the bounds.
   */
  admit(
    client: string,
    operation: string,
    address: string,
    rowsOf: (client: string, operation: string) => RowKey[],
  ): { rows: RowKey[]; own: boolean } {
    const day = this.today();
    const { newNamesPerDay, newNamesPerAddress, rowsPerDay, rowsPerAddress } = this.bounds;
    const ledger = this.ledger;
    const share = ledger.addresses.get(address);
    const newClient = isInventedClient(client) && !this.clients.has(client);
    const clientFits = !newClient || (ledger.newClients < newNamesPerDay && (share?.clients ?? 0) < newNamesPerAddress && !this.clients.full);
    const newOperation = isInventedOperation(operation) && !this.operations.has(operation);
    const operationFits =
      !newOperation || (ledger.newOperations < newNamesPerDay && (share?.operations ?? 0) < newNamesPerAddress && !this.operations.full);
    const countedClient = clientFits ? client : OVERFLOW_CLIENT;
    const countedOperation = operationFits ? operation : ANONYMOUS_OPERATION;
    const rows = rowsOf(countedClient, countedOperation);
    let added = 0;
    if (!isFixed(countedClient, countedOperation)) for (const row of rows) if (!ledger.rows.has(row.key)) added++;
    if (added > 0 && (ledger.rows.size + added > rowsPerDay || (share?.rows ?? 0) + added > rowsPerAddress))
      return { rows: rowsOf(OVERFLOW_CLIENT, operation === '' ? '' : ANONYMOUS_OPERATION), own: false };

    const admitsClient = newClient && clientFits;
    const admitsOperation = newOperation && operationFits;
    if (added > 0 || admitsClient || admitsOperation) {
      const entry = share ?? { clients: 0, operations: 0, rows: 0 };
      if (!share) ledger.addresses.set(address, entry);
      entry.rows += added;
      if (admitsClient) entry.clients++;
      if (admitsOperation) entry.operations++;
    }
    if (added > 0) for (const row of rows) ledger.rows.add(row.key);
    if (admitsClient) ledger.newClients++;
    if (admitsOperation) ledger.newOperations++;
    if (clientFits && isInventedClient(client)) this.clients.seen(client, day);
    if (operationFits && isInventedOperation(operation)) this.operations.seen(operation, day);
    return { rows, own: clientFits && operationFits };
  }

  /** Counts one request under the rows admit() gave (today's). */
  count(rows: readonly RowKey[]): void {
    this.tally.add(rows);
  }

  /** The counts so far, by day, for a flush: the book starts again from nothing. */
  take(): Tally[] {
    const taken = [...this.pending.values()].filter((tally) => tally.rows.size > 0);
    this.pending.clear();
    this.tally = this.tallyOf(this.ledger.day);
    return taken;
  }

  /** Rows a flush could not add, kept for the next one; returns the days dropped (the oldest, beyond MAX_PENDING_DAYS). */
  giveBack(day: string, rows: readonly PendingRow[]): string[] {
    const tally = this.tallyOf(day);
    for (const row of rows) tally.add([row], row.requests);
    const days = [...this.pending.keys()].sort();
    const dropped = days.slice(0, Math.max(0, days.length - MAX_PENDING_DAYS));
    for (const old of dropped) this.pending.delete(old);
    return dropped;
  }

  private tallyOf(day: string): Tally {
    let tally = this.pending.get(day);
    if (!tally) this.pending.set(day, (tally = new Tally(day)));
    return tally;
  }

  private dayAt(ms: number): DayLedger {
    const midnight = Math.floor(ms / DAY_MS) * DAY_MS;
    return new DayLedger(dayOf(midnight), midnight + DAY_MS);
  }
}

/**
 * Adds a chunk of one day's rows to the table in one statement, whatever the number of instances adding theirs. The
 * day's row bound is kept in the statement: the rows the day already holds are counted there, and a row the table does
 * not hold yet beyond the bound is added to its coordinate's fixed labels instead; so restarts and instances share the
 * bound (two instances flushing at the same moment may pass it by a chunk).
 */
async function upsert(prisma: PrismaClient, day: string, chunk: readonly PendingRow[], rowsPerDay: number): Promise<void> {
  const column = (name: 'kind' | 'coordinate' | 'client' | 'operation') => chunk.map((row) => row[name]);
  await prisma.$executeRaw(Prisma.sql`
    WITH added AS (
      SELECT a.*,
        NOT (a.client IN (${ANONYMOUS_CLIENT}, ${OVERFLOW_CLIENT}) AND a.operation IN ('', ${ANONYMOUS_OPERATION}))
        AND NOT EXISTS (
          SELECT 1 FROM contract_usage u
          WHERE (u.kind, u.coordinate, u.client, u.operation, u.day) = (a.kind, a.coordinate, a.client, a.operation, ${day}::date)
        ) AS new_row
      FROM unnest(${column('kind')}::text[], ${column('coordinate')}::text[], ${column('client')}::text[], ${column('operation')}::text[],
          ${chunk.map((row) => row.requests)}::bigint[])
        WITH ORDINALITY AS a(kind, coordinate, client, operation, requests, position)
    ),
    room AS (SELECT ${rowsPerDay}::bigint - count(*) AS rows_left FROM contract_usage WHERE day = ${day}::date),
    ranked AS (SELECT added.*, sum(new_row::int) OVER (ORDER BY position ROWS UNBOUNDED PRECEDING) AS nth FROM added),
    labelled AS (
      SELECT kind, coordinate, requests,
        CASE WHEN new_row AND nth > rows_left THEN ${OVERFLOW_CLIENT} ELSE client END AS client,
        CASE WHEN new_row AND nth > rows_left AND operation <> '' THEN ${ANONYMOUS_OPERATION} ELSE operation END AS operation
      FROM ranked CROSS JOIN room
    )
    INSERT INTO contract_usage (kind, coordinate, client, operation, day, requests)
    SELECT kind, coordinate, client, operation, ${day}::date, sum(requests)::bigint
    FROM labelled GROUP BY kind, coordinate, client, operation
    ON CONFLICT (kind, coordinate, client, operation, day)
    DO UPDATE SET requests = contract_usage.requests + excluded.requests`);
}

/** The query parameters each operation declares: only those are counted (a client may send any name). */
export function declaredQueryParameters(): Map<string, Set<string>> {
  type Parameter = { name?: string; in?: string; $ref?: string };
  const { document } = loadOpenapi();
  const components = (document as { components?: { parameters?: Record<string, Parameter> } }).components?.parameters ?? {};
  const resolve = (parameter: Parameter) => (parameter.$ref ? components[parameter.$ref.split('/').pop()!] : parameter);
  // bound: the contract's operations, read once at start
  const declared = new Map<string, Set<string>>();
  for (const item of Object.values(document.paths)) {
    const shared = (item as { parameters?: Parameter[] }).parameters ?? [];
    for (const operation of Object.values(item) as { operationId?: string; parameters?: Parameter[] }[]) {
      if (!operation?.operationId) continue;
      const names = [...shared, ...(operation.parameters ?? [])].map(resolve).filter((parameter) => parameter?.in === 'query');
      declared.set(operation.operationId, new Set(names.map((parameter) => parameter!.name!)));
    }
  }
  return declared;
}

/** The bounds the configuration sets, the schema's defaults for the rest (tests give only what they change). */
function boundsOf(config: FastifyInstance['config']['contractUsage']): UsageBounds {
  const bounds = { ...DEFAULT_USAGE_BOUNDS };
  for (const name of Object.keys(bounds) as (keyof UsageBounds)[]) {
    const value = config[name];
    if (value !== undefined) bounds[name] = value;
  }
  return bounds;
}

async function contractUsagePlugin(app: FastifyInstance): Promise<void> {
  const { enabled, flushIntervalMs = DEFAULT_FLUSH_INTERVAL_MS } = app.config.contractUsage;
  if (!enabled) {
    app.decorate('contractUsage', {
      graphqlPlugin: {},
      flush: async () => undefined,
      retain: async () => 0,
      start: () => undefined,
      started: Promise.resolve(),
    } satisfies ContractUsage);
    return;
  }
  const parameters = declaredQueryParameters();
  const book = new UsageBook(boundsOf(app.config.contractUsage));
  const { bounds } = book;

  // REST: the request's rows (its operation, and each declared query parameter it sent), after the answer.
  app.addHook('onResponse', (request, _reply, done) => {
    const operationId = request.routeOptions.config.operationId;
    if (operationId !== undefined) countRest(request, operationId);
    done();
  });
  function countRest(request: FastifyRequest, operationId: string): void {
    const declared = parameters.get(operationId);
    const query = request.query as Record<string, unknown> | undefined;
    const sent: string[] = [];
    if (declared && query && typeof query === 'object') for (const name in query) if (declared.has(name)) sent.push(name);
    const rowsOf = (client: string) => [
      rowKey(USAGE_KIND.rest, operationId, client, ''),
      ...sent.map((name) => rowKey(USAGE_KIND.restParameter, `${operationId}?${name}`, client, '')),
    ];
    const client = clientOf(request.principal, request.headers['x-client-name']);
    book.count(book.admit(client, '', clientAddress(request), rowsOf).rows);
  }

  // GraphQL: the coordinates of a (document, operation) are walked once; a client's rows for it are worked out once a
  // day (while the document is cached), then each execution is one increment per row.
  const shapes = new WeakMap<DocumentNode, Map<string, Shape | null>>();
  const admitted = new WeakMap<Shape, { day: string; byClient: Map<string, RowKey[]> }>();
  function countGraphQL(args: { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null | undefined; contextValue: unknown }) {
    let byOperation = shapes.get(args.document);
    if (!byOperation) shapes.set(args.document, (byOperation = new Map()));
    const name = args.operationName ?? '';
    let shape = byOperation.get(name);
    if (shape === undefined) {
      shape = operationCoordinates(args.schema, args.document, args.operationName) ?? null;
      // Only the names the document defines are kept: `operationName` is the caller's, and any other is refused.
      if (shape) byOperation.set(name, shape);
    }
    if (!shape) return;
    const context = args.contextValue as { principal?: Principal; request?: FastifyRequest; address?: string } | undefined;
    const client = clientOf(context?.principal, context?.request?.headers['x-client-name']);
    const day = book.today();
    let memo = admitted.get(shape);
    if (memo?.day !== day) admitted.set(shape, (memo = { day, byClient: new Map() }));
    let rows = memo.byClient.get(client);
    if (!rows) {
      const address = context?.request ? clientAddress(context.request) : (context?.address ?? 'unknown');
      const { coordinates } = shape;
      const counted = book.admit(client, shape.operation, address, (as, operation) =>
        coordinates.map((coordinate) => rowKey(USAGE_KIND.graphql, coordinate, as, operation)),
      );
      rows = counted.rows;
      // Kept only when counted as itself: an answer at a bound depends on the address, and is worked out each time.
      if (counted.own) memo.byClient.set(client, rows);
    }
    book.count(rows);
  }
  const graphqlPlugin: Plugin = {
    onExecute: ({ args }) => countGraphQL(args),
    onSubscribe: ({ args }) => countGraphQL(args),
  };

  // One flush at a time, on a timer: nothing a request awaits. A failed one keeps the rows it did not add for the next.
  let flushing: Promise<void> = Promise.resolve();
  let queued = 0;
  const flushNow = async () => {
    book.today(); // a day that ended is closed, even without a request since
    const tallies = book.take();
    for (const [index, tally] of tallies.entries()) {
      const rows = [...tally.rows.values()];
      for (let start = 0; start < rows.length; start += CHUNK) {
        try {
          await upsert(app.db.prisma, tally.day, rows.slice(start, start + CHUNK), bounds.rowsPerDay);
        } catch (error) {
          // Upserts add up: the chunks already added are not given back, or a retry would count them twice.
          const kept: [string, PendingRow[]][] = [
            [tally.day, rows.slice(start)],
            ...tallies.slice(index + 1).map((later) => [later.day, [...later.rows.values()]] as [string, PendingRow[]]),
          ];
          for (const [day, unrecorded] of kept) {
            const dropped = book.giveBack(day, unrecorded);
            if (dropped.length > 0) app.log.warn({ dropped }, 'contract usage: the oldest unrecorded days dropped');
          }
          app.log.warn({ err: error }, 'contract usage not recorded yet: retried at the next flush');
          return;
        }
      }
    }
  };
  const flush = () => {
    queued++;
    const run = flushing.then(flushNow).finally(() => queued--);
    flushing = run.catch(() => undefined);
    return run;
  };
  const retain = async () => {
    const cutoff = book.firstKeptDay();
    return app.db.prisma.$executeRaw`DELETE FROM contract_usage WHERE day < ${cutoff}::date`;
  };
  const retainInBackground = () =>
    retain().then(
      (deleted) => void (deleted > 0 && app.log.info({ deleted }, 'contract usage: days past the retention window deleted')),
      (error: unknown) => app.log.warn({ err: error }, 'contract usage: the retention failed, tried again within the hour'),
    );
  const flushTimer = setInterval(() => {
    if (queued === 0) flush().catch((error: unknown) => app.log.warn({ err: error }, 'contract usage: flush failed'));
  }, flushIntervalMs).unref();
  const retentionTimer = setInterval(() => void retainInBackground(), RETENTION_INTERVAL_MS).unref();

  // At the end of the start (app.ts, once the database is migrated and the ADMIN ensured: a start that fails never
  // queries the table), in the background (a request counted meanwhile may spend a name's admission once): the names
  // the window already recorded keep their place, the most recent first, at most as many as memory keeps.
  let started: Promise<void> = Promise.resolve();
  const start = () => {
    started = Promise.all([loadKnownNames(), retainInBackground()]).then(() => undefined);
  };
  async function loadKnownNames(): Promise<void> {
    const limit = bounds.retentionDays * bounds.newNamesPerDay;
    try {
      const names = await app.db.sql.rows<{ kind: string; name: string; last: string }>(
        `(SELECT 'client' AS kind, client AS name, to_char(max(day), 'YYYY-MM-DD') AS last FROM contract_usage
           WHERE day >= $1::date AND client NOT IN ('${ANONYMOUS_CLIENT}', '${OVERFLOW_CLIENT}') AND client NOT LIKE 'user:%'
           GROUP BY client ORDER BY last DESC LIMIT $2)
         UNION ALL
         (SELECT 'operation', operation, to_char(max(day), 'YYYY-MM-DD') AS last FROM contract_usage
           WHERE day >= $1::date AND operation NOT IN ('', '${ANONYMOUS_OPERATION}')
           GROUP BY operation ORDER BY last DESC LIMIT $2)`,
        [book.firstKeptDay(), limit],
      );
      for (const { kind, name, last } of names) (kind === 'client' ? book.clients : book.operations).merge(name, last);
    } catch (error) {
      app.log.warn({ err: error }, 'contract usage: the names already recorded could not be read (they count as new today)');
    }
  }

  // Before the database closes (its onClose runs after this one: registered earlier).
  app.addHook('onClose', async () => {
    clearInterval(flushTimer);
    clearInterval(retentionTimer);
    await started;
    await flush();
  });

  app.stores.declare({
    name: 'contract-usage-tally',
    home: 'memory',
    scope: 'store',
    maxEntries: book.maxEntries,
    ttlMs: bounds.retentionDays * DAY_MS,
    perClient: `a day, one address adds at most ${bounds.newNamesPerAddress} new client names, as many new operation names and ${bounds.rowsPerAddress} rows; names already recorded cost nothing`,
    atBound:
      'a new name beyond the day’s or the address’s share is counted as `name:other` (client) or `anonymous-operation`; a request whose new rows pass the day’s or the address’s row bound is counted under both; the request is answered as always, and names already recorded keep their place',
    config: BOUND_VARIABLES,
    size: () => ({ entries: book.entries }),
  });
  app.stores.declare({
    name: 'contract-usage-rows',
    home: 'database',
    scope: 'store',
    // The days kept (and the one the hourly retention has yet to delete), each at most its row bound, the fixed labels'
    // rows and a chunk that a second instance flushing at the same moment may add.
    maxEntries: (bounds.retentionDays + 1) * (bounds.rowsPerDay + FIXED_ROWS_MAX + CHUNK),
    ttlMs: bounds.retentionDays * DAY_MS + RETENTION_INTERVAL_MS,
    perClient: `as contract-usage-tally: a day, one address adds at most ${bounds.rowsPerAddress} rows (and ${bounds.newNamesPerAddress} new names of each kind)`,
    atBound:
      'a row beyond the day’s bound (today’s rows counted in the flush’s statement, so restarts and instances share it) is added to its coordinate’s `name:other` / `anonymous-operation` row; days past the retention are deleted at start and every hour',
    config: BOUND_VARIABLES,
    size: async () => {
      const [row] = await app.db.sql.rows<{ entries: number }>('SELECT count(*)::int AS entries FROM contract_usage');
      return { entries: row?.entries ?? 0 };
    },
  });
  app.decorate('contractUsage', {
    graphqlPlugin,
    flush,
    retain,
    start,
    get started() {
      return started;
    },
  } satisfies ContractUsage);
}

export default fp(contractUsagePlugin, { name: 'contract-usage', dependencies: ['database', 'auth'] });
