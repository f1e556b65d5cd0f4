// Whether V8 may optimise this process's WebAssembly (PGlite's PostgreSQL), which every PGlite opener of the product
// decides before PGlite runs: optimising one of its functions makes the process peak at ~760 MB on Node 24. Plain JS
// so the schema-engine bridge (bin/schema-engine.mjs) can use it without TypeScript.
import v8 from 'node:v8';

/**
 * `PGLITE_WASM_TIER_UP` as the server's config reads it: only "true" lets V8 optimise (its validator refuses any other
 * word but "false"; empty counts as unset). Default false.
 * @param {Record<string, string | undefined>} env
 */
export function optimiseWebAssemblyFromEnv(env) {
  return env.PGLITE_WASM_TIER_UP === 'true';
}

/**
 * Keeps every WebAssembly function this process compiles from now on on V8's baseline compiler (Liftoff): none is
 * handed to the optimising compiler. Called before PGlite's module runs.
 *
 * Why: on Node 24 (V8 13.6, Turboshaft) optimising one of PGlite's functions (function #2272 of its module, a 105 KB
 * body hot from the first statement) takes ~2.3 s of CPU and ~600 MB of compiler memory, and it begins during the
 * start: the embedded server peaked at ~760 MB RSS about a second after it was ready. On Node 20 (TurboFan) the same
 * function takes 0.28 s and 8 MB. What it gains and costs, measured: README, "The embedded server's memory peak".
 *
 * How, by hand (no library sets V8's tiering): `--liftoff-only` would say it, but V8 derives its effect when it starts,
 * so setting it from JavaScript changes nothing. `--wasm-tier-up-filter=N` lets only function N of each module be
 * optimised, and is read as each function is compiled (lazily, at its first call): an index no module has lets none
 * be. It holds for the whole process (V8's flags are per process): Prisma's WebAssembly (its query compiler, the
 * schema engine) then runs on Liftoff too. V8 ignores a flag it does not know: packages/db/test/webassembly-tier.test.ts
 * is the guard that it still works, from V8's own trace of its compilations.
 */
export function keepWebAssemblyOnBaselineCompiler() {
  v8.setFlagsFromString(`--wasm-tier-up-filter=${NO_FUNCTION_INDEX}`);
}

/** Larger than any module's function count (V8 caps a module at 1,000,000 functions). */
const NO_FUNCTION_INDEX = 2 ** 31 - 1;
