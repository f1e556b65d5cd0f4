// Counts the SQL statements a Database sends through its driver adapter (for "constant number of queries" tests).
//
// What is counted: every queryRaw / executeRaw call that the Prisma client makes on the driver adapter or on one
// of its transactions, i.e. one per SQL statement Prisma's query engine issues (including COMMIT / ROLLBACK that
// Prisma sends itself), and every statement of the SQL reader (sql-reader.ts, on PostgreSQL sent on the adapter's
// pool). Not counted: BEGIN (adapter-pg sends it inside startTransaction; PGlite has none to send) and anything else
// run on the underlying pg pool / PGlite instance directly, such as migrations.
import type { SqlDriverAdapter, SqlDriverAdapterFactory, SqlQuery, SqlQueryable, Transaction } from '@prisma/driver-adapter-utils';

type Listener = (sql: string) => void;

/** The listeners of each Database, keyed by the Database object (set by tapAdapterFactory's caller). */
const listenersByDatabase = new WeakMap<object, Set<Listener>>();

export interface StatementCounter {
  /** Statements seen since creation or the last reset(). */
  readonly count: number;
  /** Their SQL text, in order. */
  readonly statements: readonly string[];
  reset(): void;
  /** Stop counting. */
  stop(): void;
}

function tapQueryable<Q extends SqlQueryable>(queryable: Q, emit: Listener): Q {
  const queryRaw = queryable.queryRaw.bind(queryable);
  const executeRaw = queryable.executeRaw.bind(queryable);
  queryable.queryRaw = (query: SqlQuery) => (emit(query.sql), queryRaw(query));
  queryable.executeRaw = (query: SqlQuery) => (emit(query.sql), executeRaw(query));
  return queryable;
}

/**
 * Wrap a driver adapter factory so that every statement is reported to the listeners registered for `owner`
 * (through countStatements(owner)). Costs one function call per statement when nobody listens.
 */
export function tapAdapterFactory(factory: SqlDriverAdapterFactory, owner: object): SqlDriverAdapterFactory {
  const emit = statementEmitter(owner);
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    async connect(): Promise<SqlDriverAdapter> {
      const adapter = tapQueryable(await factory.connect(), emit);
      const startTransaction = adapter.startTransaction.bind(adapter);
      adapter.startTransaction = async (...args): Promise<Transaction> => tapQueryable(await startTransaction(...args), emit);
      return adapter;
    },
  };
}

/**
 * The function that reports one statement of `owner` to its counters, for statements sent beside the adapter (the SQL
 * reader's, on the adapter's own pool). Costs one check per statement when nobody listens.
 */
export function statementEmitter(owner: object): Listener {
  let listeners = listenersByDatabase.get(owner);
  if (!listeners) listenersByDatabase.set(owner, (listeners = new Set()));
  const known = listeners;
  return (sql) => {
    if (known.size > 0) known.forEach((listener) => listener(sql));
  };
}

/** Start counting the SQL statements `database` executes (see the header of this file for what counts). */
export function countStatements(database: object): StatementCounter {
  const listeners = listenersByDatabase.get(database);
  if (!listeners) throw new Error('countStatements: not a Database from createDatabase() / createTestDatabase()');
  const statements: string[] = [];
  const listener: Listener = (sql) => void statements.push(sql);
  listeners.add(listener);
  return {
    get count() {
      return statements.length;
    },
    statements,
    reset: () => void (statements.length = 0),
    stop: () => void listeners.delete(listener),
  };
}
