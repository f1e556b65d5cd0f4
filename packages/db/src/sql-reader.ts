// Hot reads sent under the Prisma client: on PostgreSQL to the driver adapter's own pg pool, on PGlite to the driver
// adapter; the same connections and statement counter either way, no client interpreter.
//
// Why: Prisma 7's client builds, plans and interprets every query on the main thread and then maps its rows; for a
// read by primary key that is most of the request's CPU (measured: the by-id read through the driver instead of
// `findUnique` cut CPU per request by ~40 % on GraphQL and ~58 % on REST, see docs/performance.md).
// The driver adapter is Prisma's own layer under the client: it converts the driver's values the way the client
// expects them, owns the connections, and is what statement counting taps. On PostgreSQL the reader goes one step
// lower, to that adapter's pg pool: adapter-pg's queryRaw costs ~10 µs per statement that a read by id does not need
// (a debug log call that records its arguments, a per-query type-parser object pg clones, columns turned into arrays
// and back into objects; `pnpm bench:profile`); the pool reads `timestamp` as UTC as the adapter does (database.ts).
// Written by hand (a few lines): no kept library turns an adapter's result set into model-shaped objects.
import { ColumnTypeEnum, type ArgType, type SqlDriverAdapter, type SqlDriverAdapterFactory, type SqlResultSet } from '@prisma/driver-adapter-utils';
import type pg from 'pg';

/** A bound parameter: an integer, a string, or a list of integers (for `= ANY($1)`). */
export type SqlArg = number | string | readonly number[];

export interface ReadOptions {
  /**
   * Prepare the statement by name on PostgreSQL (StatementNames): only for a text from a small fixed set (a read by
   * id, a list, an unfiltered page), never one built from what a client chose (each named text costs every connection
   * ~25 KB of the server's memory). Unset, the statement is parsed and planned at every call.
   */
  prepare?: boolean;
}

/** The options of a read that is prepared by name on PostgreSQL (see ReadOptions.prepare). */
export const PREPARED: ReadOptions = { prepare: true };

export interface SqlReader {
  /**
   * The rows of one read-only statement, as objects keyed by column name (alias columns to the model's field names,
   * e.g. `created_at AS "createdAt"`); timestamps become `Date`s as the Prisma client makes them.
   */
  rows<T>(sql: string, args?: readonly SqlArg[], options?: ReadOptions): Promise<T[]>;
  /**
   * Wraps every statement when set (the server's traces give each one a span, as @prisma/instrumentation gives the
   * client's); unset, a statement costs no more than before.
   */
  around?: (<T>(sql: string, run: () => Promise<T>) => Promise<T>) | undefined;
  /** Releases the reader's adapter (not the pool or instance, which the Database owns). */
  dispose(): Promise<void>;
}

function argType(arg: SqlArg): ArgType {
  if (Array.isArray(arg)) return { scalarType: 'int', arity: 'list' };
  return { scalarType: typeof arg === 'number' ? 'int' : 'string', arity: 'scalar' };
}

const DATE_COLUMNS = new Set<number>([ColumnTypeEnum.DateTime, ColumnTypeEnum.Date]);

/** The adapter's rows (arrays, timestamps as ISO strings) as objects in the client's types. */
function toObjects<T>(result: SqlResultSet): T[] {
  const { columnNames, columnTypes, rows } = result;
  const dates = columnTypes.map((type) => DATE_COLUMNS.has(type));
  const objects = new Array<T>(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    const object: Record<string, unknown> = {};
    for (let c = 0; c < columnNames.length; c++) {
      const value = row[c];
      object[columnNames[c]!] = dates[c] && value != null && !(value instanceof Date) ? new Date(value as string) : value;
    }
    objects[r] = object as T;
  }
  return objects;
}

/** A reader on its own adapter from `factory` (connected on first use): for adapter-pg the same external pool, for PGlite the same instance. */
export function createSqlReader(factory: SqlDriverAdapterFactory): SqlReader {
  let adapter: Promise<SqlDriverAdapter> | undefined;
  let disposed = false;
  const connected = () => {
    // A read still running when the database closed must not connect a new adapter that nobody would dispose.
    if (disposed) throw new Error('Database is closed');
    return (adapter ??= factory.connect().catch((error: unknown) => {
      adapter = undefined; // a database that was away at the first read is retried at the next
      throw error;
    }));
  };
  const run = async <T>(sql: string, args: readonly SqlArg[]): Promise<T[]> => {
    const result = await (await connected()).queryRaw({ sql, args: [...args], argTypes: args.map(argType) });
    return toObjects<T>(result);
  };
  return readerOf(run, async () => {
    disposed = true;
    const open = adapter;
    adapter = undefined;
    if (open) await (await open).dispose();
  });
}

/** At most this many distinct texts are named (the product's opted-in reads are ~45); past it, unnamed as before. */
export const MAX_NAMED_STATEMENTS = 200;

/**
 * Names for the statements a reader sends on PostgreSQL. A statement sent by name is parsed and planned once per
 * connection (pg remembers which names each connection has prepared) instead of at every call: PostgreSQL's CPU per
 * read by id went from 79 to 45 µs (in-process loop, 8 alternating rounds). Only reads that opt in are named
 * (ReadOptions.prepare), so what each connection keeps is bounded by the code, and by MAX_NAMED_STATEMENTS besides.
 * Written by hand: pg sends a statement by name but leaves choosing names, and what to do when a prepared plan goes
 * stale or a pooler loses it, to its caller.
 */
export class StatementNames {
  private readonly names = new Map<string, string>();
  private issued = 0;
  private off = false;

  constructor(
    private readonly max = MAX_NAMED_STATEMENTS,
    /** Told once when naming is turned off for the process (see turnOff). */
    private readonly onTurnedOff: (reason: Error) => void = () => {},
  ) {}

  /** The name to send `sql` under, or undefined (unnamed) past the bound or once turned off. */
  of(sql: string): string | undefined {
    if (this.off) return undefined;
    let name = this.names.get(sql);
    if (name === undefined && this.names.size < this.max) this.names.set(sql, (name = this.next()));
    return name;
  }

  /**
   * A new name for `sql` after PostgreSQL refused the prepared plan of `failed`: a migration changed the type of a
   * column it reads. Each connection then prepares it again under the new name (the old one stays with the connections
   * that prepared it, until they close). Reads that failed together share one new name.
   */
  renew(sql: string, failed: string): string | undefined {
    if (this.off || !this.names.has(sql)) return undefined;
    if (this.names.get(sql) === failed) this.names.set(sql, this.next());
    return this.names.get(sql);
  }

  private next(): string {
    return `users_posts_${++this.issued}`;
  }

  /**
   * No more names in this process: the server lost a name its connection had prepared, or had one it never got, which
   * is what a pooler in transaction mode that does not keep prepared statements does (PgBouncer before 1.21, or without
   * `max_prepared_statements`). Reads go on unnamed, as with DATABASE_PREPARED_STATEMENTS=false.
   */
  turnOff(reason: Error): void {
    if (this.off) return;
    this.off = true;
    this.onTurnedOff(reason);
  }
}

const codeOf = (error: unknown): unknown => (error as { code?: unknown } | null)?.code;

/**
 * PostgreSQL's refusal of a prepared plan whose result type a schema change altered ("cached plan must not change
 * result type"), told by its SQLSTATE and the server function that raises it, which are not translated (the message is).
 */
function isStalePlan(error: unknown): boolean {
  return codeOf(error) === '0A000' && (error as { routine?: unknown }).routine === 'RevalidateCachedQuery';
}

/** A named statement the server does not have (26000) or already had (42P05): the connection is not the one that prepared it. */
function isLostName(error: unknown): boolean {
  return codeOf(error) === '26000' || codeOf(error) === '42P05';
}

/**
 * A reader on adapter-pg's own pool (PostgreSQL): pg's rows are already objects keyed by column name, and the pool
 * parses timestamps as the adapter does (createPool). `emit` reports each statement to the Database's counters. With
 * `names`, reads that opt in are prepared by name (StatementNames); without, every statement is parsed at each call
 * (the embedded database's bridge, whose one PGlite backend is shared by every connection and outlives their names).
 */
export function createPoolSqlReader(pool: pg.Pool, emit: (sql: string) => void, names?: StatementNames): SqlReader {
  let disposed = false;
  const send = async (sql: string, args: readonly SqlArg[], name: string | undefined) =>
    // The (text, values) form when unnamed: pg copies a query-config object per call, not this one.
    (name === undefined ? await pool.query(sql, args as unknown[]) : await pool.query({ name, text: sql, values: args as unknown[] })).rows;
  const run = async <T>(sql: string, args: readonly SqlArg[], options: ReadOptions | undefined): Promise<T[]> => {
    if (disposed) throw new Error('Database is closed');
    emit(sql);
    const name = options?.prepare ? names?.of(sql) : undefined;
    try {
      return (await send(sql, args, name)) as T[];
    } catch (error) {
      // Both refusals come before the statement runs, and these are reads: sending it again is safe.
      if (name === undefined || !names) throw error;
      if (isStalePlan(error)) return (await send(sql, args, names.renew(sql, name))) as T[];
      if (!isLostName(error)) throw error;
      names.turnOff(error as Error);
      return (await send(sql, args, undefined)) as T[];
    }
  };
  return readerOf(run, async () => {
    disposed = true; // the pool is the Database's, ended by its close()
  });
}

function readerOf(
  run: <T>(sql: string, args: readonly SqlArg[], options: ReadOptions | undefined) => Promise<T[]>,
  dispose: () => Promise<void>,
): SqlReader {
  const reader: SqlReader = {
    rows<T>(sql: string, args: readonly SqlArg[] = [], options?: ReadOptions): Promise<T[]> {
      return reader.around ? reader.around(sql, () => run<T>(sql, args, options)) : run<T>(sql, args, options);
    },
    dispose,
  };
  return reader;
}
