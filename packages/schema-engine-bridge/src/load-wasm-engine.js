// Loads Prisma's schema engine compiled to WebAssembly (@prisma/schema-engine-wasm) under plain Node and opens it
// over a driver adapter. Plain JS so that both bin/schema-engine.mjs (no TypeScript at run time) and src/*.ts use it.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import * as bg from '@prisma/schema-engine-wasm/schema_engine_bg';

/** @type {Promise<typeof bg> | undefined} */
let loaded;

/**
 * The package's own entry does `import * as wasm from "./x.wasm"`, which Node 20 cannot load. Do what a bundler
 * would: instantiate the .wasm next to the glue module with the glue as its import object, then hand the exports
 * back to the glue. Done once per process (module registry).
 */
export function loadSchemaEngineWasm() {
  loaded ??= (async () => {
    // Rust panics report their message through this global (the Prisma CLI and client install the same shape).
    /** @type {any} */ (globalThis).PRISMA_WASM_PANIC_REGISTRY ??= {
      message: '',
      set_message(/** @type {string} */ m) {
        this.message = `RuntimeError: ${m}`;
      },
    };
    const bytes = await readSchemaEngineWasm();
    const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': withUnrefTimers(bg) });
    bg.__wbg_set_wasm(instance.exports);
    /** @type {any} */ (instance.exports).__wbindgen_start();
    return bg;
  })();
  return loaded;
}

/**
 * The .wasm beside this module: in the production bundle (scripts/build.mjs copies it into apps/api/dist/, where the
 * package is not resolvable); otherwise next to the package's glue module.
 */
async function readSchemaEngineWasm() {
  const besideBundle = await readFile(new URL('./schema_engine_bg.wasm', import.meta.url)).catch(() => undefined);
  if (besideBundle) return besideBundle;
  const glue = createRequire(import.meta.url).resolve('@prisma/schema-engine-wasm/schema_engine_bg');
  return readFile(path.join(path.dirname(glue), 'schema_engine_bg.wasm'));
}

/**
 * The engine arms 10 s timers (e.g. around its migration advisory lock) and leaves them pending after the work is
 * done, which keeps Node (and jest) alive for 10 s after the last migration. Unref them: they only race real work.
 * @param {Record<string, unknown>} glue
 */
function withUnrefTimers(glue) {
  const imports = { ...glue };
  for (const [name, fn] of Object.entries(glue)) {
    if (name.startsWith('__wbg_setTimeout_') && typeof fn === 'function') {
      imports[name] = (/** @type {unknown[]} */ ...args) => {
        const timer = fn(...args);
        timer?.unref?.();
        return timer;
      };
    }
  }
  return imports;
}

/**
 * Open a schema engine. `adapterFactory` must be migration-aware (`connect` + `connectToShadowDb`), e.g. PrismaPg
 * or PrismaPGlite; it is wrapped with bindMigrationAwareSqlAdapterFactory, without which the engine fails with
 * "Cannot read properties of null". `datamodels` is a list of [path, content] of the Prisma schema files.
 * `onLog` receives the engine's log lines (JSON strings in the native engine's tracing format).
 */
export async function openSchemaEngine({ adapterFactory, datamodels = [], onLog = () => {} }) {
  const { SchemaEngine } = await loadSchemaEngineWasm();
  return SchemaEngine.new({ datamodels }, onLog, bindMigrationAwareSqlAdapterFactory(adapterFactory));
}

/** Version string of the WASM engine package (e.g. "8.1.0-2.<engine hash>"). */
export async function schemaEngineVersion() {
  return (await loadSchemaEngineWasm()).version();
}
