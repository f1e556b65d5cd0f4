// Work-arounds for the WASM schema engine's shadow-database gaps: replay the migration history into a throwaway
// database with a second engine, then diff that against the target schema. Used by bin/schema-engine.mjs.
//
// Seen with @prisma/schema-engine-wasm 8.1.0-2.59be4fda: `createMigration` and `evaluateDataLoss` fail with
// "PostgreSQL shadow DB must be provided through an external factory" once the history is non-empty (devDiagnostic
// and diagnoseMigrationHistory do use the adapter's shadow database), and `diff` from/to `migrations` replays on
// the main database. The engine's own method is always tried first; these run only when it reports that error.
import { openSchemaEngine } from './load-wasm-engine.js';

export const SHADOW_GAP = /shadow DB must be provided through an external factory/;
const NO_FILTERS = { externalTables: [], externalEnums: [] };

/**
 * Run `fn(engine)` on a second engine whose main database is a fresh shadow database of `factory` (an in-memory
 * PGlite, or a throwaway PostgreSQL database) with `migrationsList` applied. The shadow is disposed afterwards.
 * @template T
 * @param {any} factory a factory from migration-adapters.js
 * @param {import('@prisma/schema-engine-wasm').MigrationList} migrationsList
 * @param {[string, string][]} datamodels
 * @param {(engine: import('@prisma/schema-engine-wasm').SchemaEngine) => Promise<T>} fn
 * @returns {Promise<T>}
 */
export async function withReplayedHistory(factory, migrationsList, datamodels, fn) {
  /** @type {any} */
  let shadow;
  const shadowAsMain = {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => {
      shadow ??= await factory.connectToShadowDb();
      if (migrationsList.shadowDbInitScript) await shadow.executeScript(migrationsList.shadowDbInitScript);
      return shadow;
    },
    connectToShadowDb: () => factory.connectToShadowDb(),
  };
  const engine = await openSchemaEngine({ adapterFactory: shadowAsMain, datamodels });
  try {
    await engine.applyMigrations({ migrationsList, filters: NO_FILTERS });
    return await fn(engine);
  } finally {
    engine.free();
    await shadow?.dispose();
  }
}

/**
 * SQL from the replayed history to `schema`; `script` is null when there is nothing to do.
 * @param {import('@prisma/schema-engine-wasm').SchemaEngine} engine an engine from withReplayedHistory
 * @param {import('@prisma/schema-engine-wasm').SchemasContainer} schema
 * @param {import('@prisma/schema-engine-wasm').SchemaFilter} filters
 */
async function diffFromReplayed(engine, schema, filters) {
  const from = { tag: /** @type {const} */ ('schemaDatasource'), files: schema.files, configDir: process.cwd() };
  const to = { tag: /** @type {const} */ ('schemaDatamodel'), files: schema.files };
  const { exitCode, stdout } = await engine.diff({ from, to, script: true, exitCode: true, filters });
  return exitCode === 2 ? String(stdout) : null;
}

/** `createMigration` through a replayed history. @param {any} factory @param {[string, string][]} datamodels @param {import('@prisma/schema-engine-wasm').CreateMigrationInput} input */
export async function createMigrationViaReplay(factory, datamodels, input) {
  const script = await withReplayedHistory(factory, input.migrationsList, datamodels, (engine) =>
    diffFromReplayed(engine, input.schema, input.filters),
  );
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14); // YYYYMMDDHHMMSS, UTC like the engine
  return {
    connectorType: /** @type {const} */ ('postgresql'),
    generatedMigrationName: input.migrationName ? `${stamp}_${input.migrationName}` : stamp,
    migrationScript: script ?? (input.draft ? '-- This is an empty migration.' : null),
    extension: 'sql',
  };
}

/**
 * `evaluateDataLoss` through a replayed history. The engine's destructive-change checker (which looks at the rows
 * in the main database) is out of reach, so the warnings are those the engine writes at the top of the script
 * ("You are about to drop the column …"), reported whether or not the table holds rows: `migrate dev` then asks
 * for confirmation more often than with the native engine, never less.
 * @param {any} factory @param {[string, string][]} datamodels @param {import('@prisma/schema-engine-wasm').EvaluateDataLossInput} input
 */
export async function evaluateDataLossViaReplay(factory, datamodels, input) {
  const script = await withReplayedHistory(factory, input.migrationsList, datamodels, (engine) =>
    diffFromReplayed(engine, input.schema, input.filters),
  );
  if (!script) return { migrationSteps: 0, warnings: [], unexecutableSteps: [] };
  const header = /^\/\*([\s\S]*?)\*\//.exec(script.trimStart())?.[1] ?? '';
  const warnings = [...header.matchAll(/^\s*- (.+)$/gm)].map((m, stepIndex) => ({ message: m[1], stepIndex }));
  const migrationSteps = (script.match(/^-- \w/gm) ?? []).length || 1;
  return { migrationSteps, warnings, unexecutableSteps: [] };
}

/**
 * `diff` where one side is a migrations directory and the other does not need the main database: run the whole
 * diff on a replayed history, with the migrations side read back from it. Returns undefined when not applicable.
 * @param {any} factory @param {[string, string][]} datamodels @param {import('@prisma/schema-engine-wasm').DiffParams} params
 */
export async function diffWithMigrationsViaReplay(factory, datamodels, params) {
  const { from, to } = params;
  const side = from.tag === 'migrations' ? 'from' : to.tag === 'migrations' ? 'to' : undefined;
  const other = side === 'from' ? to : from;
  if (!side || !['empty', 'schemaDatamodel'].includes(other.tag)) return undefined;
  const migrations = /** @type {import('@prisma/schema-engine-wasm').MigrationList} */ (params[side]);
  const replayed = {
    tag: /** @type {const} */ ('schemaDatasource'),
    files: datamodels.map(([path, content]) => ({ path, content })),
    configDir: process.cwd(),
  };
  return withReplayedHistory(factory, migrations, datamodels, (engine) => engine.diff({ ...params, [side]: replayed }));
}
