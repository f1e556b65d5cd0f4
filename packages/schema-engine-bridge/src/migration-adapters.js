// Driver adapter factories that the WASM schema engine migrates through: PostgreSQL (@prisma/adapter-pg) and PGlite
// (pglite-prisma-adapter), each with the small fixes the engine needs. Shared by bin/schema-engine.mjs and src/*.ts.
import { PGlite } from '@electric-sql/pglite';
import { PGLITE_EXTENSIONS } from './pglite-extensions.js';
import { PrismaPg } from '@prisma/adapter-pg';
import { ColumnTypeEnum } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import { parseIntoClientConfig } from 'pg-connection-string';
import { PrismaPGlite } from 'pglite-prisma-adapter';

const PG_CHAR_OID = 18; // Postgres' internal one-byte "char" type (pg_constraint.contype, pg_class.relkind, …)
const PG_TEXT_OID = 25;

/**
 * The engine's schema describer reads pg_catalog "char" columns, which adapter-pg 7.10 rejects ("Column type 'char'
 * could not be deserialized"), and expects them as Character values (it panics on a CHECK constraint's contype
 * read as Text). Report such columns as Character, as pglite-prisma-adapter does. Only the engine's connections
 * are wrapped; the application's Prisma client keeps plain adapter-pg.
 * @param {any} queryable a PrismaPgAdapter or one of its transactions
 */
function readCharColumns(queryable) {
  const queryRaw = queryable.queryRaw;
  queryable.queryRaw = async (/** @type {any} */ query) => {
    /** @type {number[]} */
    const charColumns = [];
    // A per-call view whose performIO hides OID 18 from adapter-pg's type mapping (safe with concurrent queries).
    const view = Object.create(queryable, {
      performIO: {
        value: async (/** @type {any} */ q) => {
          const result = await queryable.performIO(q);
          result.fields.forEach((/** @type {{ dataTypeID: number }} */ field, /** @type {number} */ i) => {
            if (field.dataTypeID === PG_CHAR_OID) (charColumns.push(i), (field.dataTypeID = PG_TEXT_OID));
          });
          return result;
        },
      },
    });
    const result = await queryRaw.call(view, query);
    for (const i of charColumns) result.columnTypes[i] = ColumnTypeEnum.Character;
    return result;
  };
  const startTransaction = queryable.startTransaction;
  if (startTransaction) {
    queryable.startTransaction = async (/** @type {any[]} */ ...args) => readCharColumns(await startTransaction.apply(queryable, args));
  }
  return queryable;
}

/**
 * Replace an adapter's executeScript (how the engine runs migration scripts) by `run(script)`, with errors mapped
 * like any other query's. Returns the adapter.
 * @param {any} adapter
 * @param {(script: string) => Promise<unknown>} run
 */
function withScriptRunner(adapter, run) {
  adapter.executeScript = async (/** @type {string} */ script) => {
    try {
      await run(script);
    } catch (error) {
      adapter.onError(error);
    }
  };
  return adapter;
}

/** The engine never disposes the main adapter; remember every adapter handed out so `close()` can. */
class AdapterTracker {
  /** @type {Set<{ dispose(): Promise<void> }>} */
  live = new Set();
  /** @template {{ dispose(): Promise<void> }} A @param {A} adapter @returns {A} */
  track(adapter) {
    const dispose = adapter.dispose.bind(adapter);
    adapter.dispose = async () => {
      if (this.live.delete(adapter)) await dispose();
    };
    this.live.add(adapter);
    return adapter;
  }
  async closeAll() {
    await Promise.all([...this.live].map((adapter) => adapter.dispose()));
  }
}

class PgMigrationAdapterFactory extends PrismaPg {
  /** @param {pg.PoolConfig} config */
  constructor(config) {
    super(config);
    this.poolConfig = config;
    this.adapters = new AdapterTracker();
  }
  // Migration scripts run whole, in one simple-protocol query, as with the native engine (adapter-pg splits them on
  // every ";", which breaks string literals and function bodies and spreads the pieces over pool connections).
  async connect() {
    const adapter = readCharColumns(await super.connect());
    return this.adapters.track(withScriptRunner(adapter, (script) => adapter.underlyingDriver().query(script)));
  }
  /**
   * A throwaway database on the same server. (adapter-pg's own version drops it while its pool still holds a
   * connection, which fails with "is being accessed by other users", and never closes its admin pool.)
   */
  async connectToShadowDb() {
    const database = `prisma_migrate_shadow_db_${globalThis.crypto.randomUUID()}`;
    const admin = new pg.Client(this.poolConfig);
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE "${database}"`);
    } catch (error) {
      await admin.end();
      throw error;
    }
    const shadowFactory = new PgMigrationAdapterFactory({ ...this.poolConfig, database });
    const shadow = await shadowFactory.connect();
    const closePool = shadow.dispose.bind(shadow);
    shadow.dispose = async () => {
      await closePool();
      await admin.query(`DROP DATABASE IF EXISTS "${database}"`).finally(() => admin.end());
    };
    return this.adapters.track(shadow);
  }
  /** Close every pool this factory opened (and drop shadow databases the engine left behind). */
  close() {
    return this.adapters.closeAll();
  }
}

/**
 * Migration-aware adapter factory for a PostgreSQL URL. The URL is split into discrete fields because adapter-pg
 * opens its shadow database with `{ ...config, database }`, and pg lets a `connectionString` override `database`.
 * @param {string} url
 */
export function pgMigrationAdapter(url) {
  // @ts-expect-error pg-connection-string types `ssl` more loosely than pg's PoolConfig
  return new PgMigrationAdapterFactory({ ...parseIntoClientConfig(url), max: 2 });
}

class PGliteMigrationAdapterFactory extends PrismaPGlite {
  /** @param {PGlite | (() => Promise<PGlite>)} db the database, or a lazy opener */
  constructor(db) {
    super(/** @type {PGlite} */ (/** @type {unknown} */ (null)));
    this.open = typeof db === 'function' ? db : async () => db;
    this.adapters = new AdapterTracker();
  }
  // pglite-prisma-adapter 0.7.2 calls `exec(script)` without awaiting it, so a failing migration script is reported
  // as applied and its error escapes as an unhandled rejection: await it.
  async connect() {
    const db = await this.open();
    return withScriptRunner(await new PrismaPGlite(db).connect(), (script) => db.exec(script));
  }
  /** The shadow database (to replay migrations in `migrate dev`) is a throwaway in-memory PGlite. */
  async connectToShadowDb() {
    const shadow = new PGlite({ extensions: PGLITE_EXTENSIONS });
    const adapter = withScriptRunner(await new PrismaPGlite(shadow).connect(), (script) => shadow.exec(script));
    adapter.dispose = () => shadow.close();
    return this.adapters.track(adapter);
  }
  /** Close the shadow databases the engine left open. The main PGlite belongs to the caller. */
  close() {
    return this.adapters.closeAll();
  }
}

/**
 * Migration-aware adapter factory for a PGlite database (the caller opens and closes it).
 * @param {PGlite | (() => Promise<PGlite>)} db the database, or a function opening it on first use
 */
export function pgliteMigrationAdapter(db) {
  return new PGliteMigrationAdapterFactory(db);
}
