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

export interface SqlReader {
  /**
   * The rows of one read-only statement, as objects keyed by column name (alias columns to the model's field names,
   * e.g. `created_at AS "createdAt"`); timestamps become `Date`s as the Prisma client makes them.
   */
  rows<T>(sql: string, args?: readonly SqlArg[]): Promise<T[]>;
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

/** At most this many distinct statement texts are prepared per connection (the product's reader uses a few dozen). */
export const MAX_NAMED_STATEMENTS = 200;

/**
 * Names for the statements a reader sends on PostgreSQL. A statement sent by name is parsed and planned once per
 * connection (pg remembers which names each connection has prepared) instead of at every call: PostgreSQL's CPU per
 * read by id went from 79 to 45 µs (bench, in-process loop, 8 alternating rounds). Bounded: the reader's texts come
 * from a fixed set of builders with every value a parameter, but past MAX_NAMED_STATEMENTS distinct texts a new one is
 * sent unnamed, as before, so no caller can grow what each connection keeps. Written by hand: pg names statements but
 * leaves choosing the names, and what to do when a plan goes stale, to its caller.
 */
export class StatementNames {
  private readonly names = new Map<string, string>();
  private issued = 0;

  constructor(private readonly max = MAX_NAMED_STATEMENTS) {}

  /** The name to send `sql` under, or undefined (unnamed) past the bound. */
  of(sql: string): string | undefined {
    let name = this.names.get(sql);
    if (name === undefined && this.names.size < this.max) this.names.set(sql, (name = `users_posts_${++this.issued}`));
    return name;
  }

  /**
   * A new name for `sql`, after PostgreSQL refused its prepared plan: a migration changed the type of a column it
   * reads ("cached plan must not change result type"). Each connection then prepares it again under the new name
   * (the old one stays with the connections that prepared it, until they close).
   */
  renew(sql: string): string | undefined {
    if (!this.names.has(sql)) return undefined;
    const name = `users_posts_${++this.issued}`;
    this.names.set(sql, name);
    return name;
  }
}

/** PostgreSQL's refusal of a prepared plan whose result type a schema change altered (SQLSTATE 0A000). */
function isStalePlan(error: unknown): boolean {
  return (error as { code?: unknown }).code === '0A000' && /cached plan must not change result type/.test((error as Error).message);
}

/**
 * A reader on adapter-pg's own pool (PostgreSQL): pg's rows are already objects keyed by column name, and the pool
 * parses timestamps as the adapter does (createPool). `emit` reports each statement to the Database's counters. With
 * `names`, statements are prepared by name (StatementNames); without, each is parsed at every call (the embedded
 * database's bridge, whose one PGlite backend is shared by every connection and would outlive a connection's names).
 */
export function createPoolSqlReader(pool: pg.Pool, emit: (sql: string) => void, names?: StatementNames): SqlReader {
  let disposed = false;
  const send = async (sql: string, args: readonly SqlArg[], name: string | undefined) =>
    // The (text, values) form when unnamed: pg copies a query-config object per call, not this one.
    (name === undefined ? await pool.query(sql, args as unknown[]) : await pool.query({ name, text: sql, values: args as unknown[] })).rows;
  const run = async <T>(sql: string, args: readonly SqlArg[]): Promise<T[]> => {
    if (disposed) throw new Error('Database is closed');
    emit(sql);
    const name = names?.of(sql);
    try {
      return (await send(sql, args, name)) as T[];
    } catch (error) {
      // A read: sending it again under a new name is safe, and prepares the current plan.
      if (name === undefined || !isStalePlan(error)) throw error;
      return (await send(sql, args, names!.renew(sql))) as T[];
    }
  };
  return readerOf(run, async () => {
    disposed = true; // the pool is the Database's, ended by its close()
  });
}

function readerOf(run: <T>(sql: string, args: readonly SqlArg[]) => Promise<T[]>, dispose: () => Promise<void>): SqlReader {
  const reader: SqlReader = {
    rows<T>(sql: string, args: readonly SqlArg[] = []): Promise<T[]> {
      return reader.around ? reader.around(sql, () => run<T>(sql, args)) : run<T>(sql, args);
    },
    dispose,
  };
  return reader;
}
