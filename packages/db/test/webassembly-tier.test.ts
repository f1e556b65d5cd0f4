// Whether V8 optimises the embedded database's WebAssembly (schema-engine-bridge/src/webassembly-tier.js), read from
// V8's own trace of its compilations in a process of its own (V8's flags are per process). What that does to the
// memory peak is measured by `pnpm bench` (peak RSS of the embedded start), not here: a peak moves with the machine.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { databaseOptionsFromEnv, REPO_ROOT } from '../src/index.js';
import { temporaryDirectories } from './support/temp-dirs.js';

const tempDir = temporaryDirectories('users-posts-wasm-tier-');

/** Runs an ES module script in a Node process of its own, with `flags`; its standard output. */
async function runScript(script: string, flags: string[] = []): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [...flags, '--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: REPO_ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/** What one process that opened the embedded database and ran statements on it saw. */
interface Run {
  optimisedFunctions: number;
  baselineFunctions: number;
}

/**
 * Opens PGlite in its thread on `dataDir` (as every start but the first does), runs 400 statements over the wire
 * protocol, waits a second for V8's background compilations, and reports them.
 */
async function openAndQuery(dataDir: string, option: string): Promise<Run> {
  const stdout = await runScript(
    `
    import pg from 'pg';
    import { startPGliteThread } from './packages/db/src/embedded/pglite-thread.ts';
    const thread = startPGliteThread(${JSON.stringify(dataDir)}, ${option});
    await thread.listening;
    const client = new pg.Client({ connectionString: thread.url });
    await client.connect();
    await client.query('CREATE TABLE IF NOT EXISTS notes (id serial PRIMARY KEY, body text NOT NULL)');
    for (let i = 0; i < 200; i++) {
      await client.query('INSERT INTO notes (body) VALUES ($1)', ['note ' + i]);
      await client.query('SELECT id, body FROM notes WHERE id = $1 OR body LIKE $2 ORDER BY id DESC LIMIT 5', [i, '%' + i]);
    }
    await client.end();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await thread.stop();
  `,
    ['--trace-wasm-compilation-times'],
  );
  // V8 traces each compilation as "Compiled function <module>#<index> using <tier>, …". PostgreSQL's module is the one
  // with the most functions; another one (a loader's, such as tsx's lexer, compiled before the flag was set) may tier up.
  const compilations = [...stdout.matchAll(/^Compiled function (0x[0-9a-f]+)#\d+ using (TurboFan|Liftoff)/gm)];
  const byModule = new Map<string, { optimised: number; baseline: number }>();
  for (const [, module, tier] of compilations) {
    const counts = byModule.get(module!) ?? { optimised: 0, baseline: 0 };
    counts[tier === 'TurboFan' ? 'optimised' : 'baseline']++;
    byModule.set(module!, counts);
  }
  const postgres = [...byModule.values()].sort((a, b) => b.baseline - a.baseline)[0] ?? { optimised: 0, baseline: 0 };
  return { optimisedFunctions: postgres.optimised, baselineFunctions: postgres.baseline };
}

describe("the embedded database's WebAssembly tier", () => {
  let dataDir: string;
  beforeAll(async () => {
    // Created (initdb) in a process of its own: in this one, V8 would optimise PGlite's module with its default tiers.
    dataDir = path.join(tempDir(), 'pglite');
    await runScript(`
      import { startPGliteThread } from './packages/db/src/embedded/pglite-thread.ts';
      const thread = startPGliteThread(${JSON.stringify(dataDir)}, { optimiseWebAssembly: false });
      await thread.listening;
      await thread.stop();
    `);
  }, 60_000);

  it("optimises none of PostgreSQL's functions when told not to", async () => {
    const run = await openAndQuery(dataDir, '{ optimiseWebAssembly: false }');
    // The trace was read: hundreds of PostgreSQL's functions ran on Liftoff (~900–1,800: how many depends on the
    // statements' paths, e.g. whether CREATE TABLE IF NOT EXISTS creates it).
    expect(run.baselineFunctions).toBeGreaterThan(500);
    expect(run.optimisedFunctions).toBe(0);
  }, 60_000);

  it("is V8's default otherwise: the same statements have V8 optimise PostgreSQL's hot functions", async () => {
    const run = await openAndQuery(dataDir, '{}');
    // With tier-up on, how many functions are still on Liftoff when the trace ends depends on the machine's load (V8
    // tiers up in the background: 244 were seen on a busy run, ~1,000 on a quiet one); that the trace was read is all
    // this count has to show here.
    expect(run.baselineFunctions).toBeGreaterThan(0);
    expect(run.optimisedFunctions).toBeGreaterThan(0); // so the test above would see an optimisation if one happened
  }, 60_000);

  it('is chosen from PGLITE_WASM_TIER_UP by the other openers (`pnpm db:seed`) as by the server: only "true" optimises', () => {
    expect(databaseOptionsFromEnv({ PGLITE_DIR: '.data/pglite' }).optimiseWebAssembly).toBe(false);
    expect(databaseOptionsFromEnv({ PGLITE_WASM_TIER_UP: 'false' }).optimiseWebAssembly).toBe(false);
    expect(databaseOptionsFromEnv({ PGLITE_WASM_TIER_UP: 'true' }).optimiseWebAssembly).toBe(true);
    expect(databaseOptionsFromEnv({ DATABASE_URL: 'postgres://db/app' })).toEqual({ databaseUrl: 'postgres://db/app' }); // no PGlite
  });
});
