// Types of load-wasm-engine.js (plain JS so the bridge executable can run it without TypeScript).
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type * as bg from '@prisma/schema-engine-wasm';

export type SchemaEngine = bg.SchemaEngine;
export function loadSchemaEngineWasm(): Promise<typeof bg>;
export function openSchemaEngine(options: {
  adapterFactory: SqlMigrationAwareDriverAdapterFactory;
  /** [path, content] of the Prisma schema files; at least one (the engine requires it). */
  datamodels?: [string, string][];
  onLog?: (line: string) => void;
}): Promise<bg.SchemaEngine>;
export function schemaEngineVersion(): Promise<string>;
