// Production build: bundles apps/api/src/main.ts with esbuild into apps/api/dist/ and copies the files it reads at run time.
// Plain JS (not .ts) so that `pnpm build` needs no TypeScript loader and `pnpm start` stays quick to build.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { access, copyFile, cp, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'apps/api/dist');

/**
 * Packages left to Node at run time, resolved from apps/api (each is a dependency of @users-posts/api):
 * argon2 is a native addon. pg-native is pg's optional native driver (never installed) and must stay a lazy require.
 */
const EXTERNAL = ['@node-rs/argon2', 'pg-native'];

/**
 * Files the bundled code opens next to itself (`new URL('./x', import.meta.url)`), copied into dist/:
 * PGlite's Postgres build, initial file system and pg_trgm extension, and Prisma's schema engine (load-wasm-engine.js looks beside the
 * bundle first, since @prisma/schema-engine-wasm is not resolvable from apps/api).
 */
const requireFromDb = createRequire(path.join(root, 'packages/db/package.json'));
const requireFromBridge = createRequire(path.join(root, 'packages/schema-engine-bridge/package.json'));
const pgliteDist = path.dirname(requireFromDb.resolve('@electric-sql/pglite'));
const schemaEngineDir = path.dirname(requireFromBridge.resolve('@prisma/schema-engine-wasm/schema_engine_bg'));
const RUNTIME_FILES = [
  path.join(pgliteDist, 'pglite.wasm'),
  path.join(pgliteDist, 'pglite.data'),
  path.join(pgliteDist, 'initdb.wasm'),
  // The trigram extension the migrations create (schema-engine-bridge/src/pglite-extensions.js finds it here).
  path.join(pgliteDist, 'pg_trgm.tar.gz'),
  path.join(schemaEngineDir, 'schema_engine_bg.wasm'),
];

/**
 * Swagger UI's assets, copied to dist/static: the bundled @fastify/swagger-ui reads its logo at `__dirname/static`
 * (dist/, once bundled) and plugins/docs.ts serves this copy as its `baseDir` (the plugin's documented way to bundle
 * it). Bundled rather than left to Node: resolving and loading the plugin's CommonJS tree cost ~50 ms of each start.
 */
const swaggerUiStatic = path.join(path.dirname(createRequire(path.join(root, 'apps/api/package.json')).resolve('@fastify/swagger-ui')), 'static');

/**
 * graphql-js picks its `instanceOf` at load time from `process.env.NODE_ENV === 'production'`; otherwise every type
 * check of the executor runs a slow cross-realm check (~40 % of self time completing large lists). The product runs
 * with NODE_ENV unset by default, so the bundle always uses the production function. The development check exists
 * to catch two copies of graphql, which assertSingleGraphql checks on the bundle's metafile instead.
 */
const graphqlProductionInstanceOf = {
  name: 'graphql-production-instanceof',
  setup(build) {
    build.onLoad({ filter: /[\\/]graphql[\\/]jsutils[\\/]instanceOf\.m?js$/ }, async (args) => {
      const esm = args.path.endsWith('.mjs');
      const body = 'function instanceOf(value, constructor) {\n  return value instanceof constructor;\n}\n';
      return { contents: esm ? `export const instanceOf = ${body}` : `'use strict';\nexports.instanceOf = ${body}`, loader: 'js' };
    });
  },
};

/**
 * graphql-js as its ES modules (`.mjs`), for `require('graphql')` and `import … from 'graphql'` alike. Its CommonJS
 * build defines every export as a getter (`Object.defineProperty(exports, 'isListType', { get })`), and a bundle
 * reads CommonJS exports at each use, so the executor paid a getter call per type check (5 % of the CPU of the nested
 * query in the profile). One file per module either way, so there is still one copy (assertSingleGraphql).
 */
const graphqlAsEsm = {
  name: 'graphql-as-esm',
  setup(build) {
    const graphqlDir = path.dirname(createRequire(path.join(root, 'apps/api/package.json')).resolve('graphql/package.json'));
    build.onResolve({ filter: /^graphql(\/.*)?$/ }, async (args) => {
      const subpath = args.path
        .slice('graphql'.length)
        .replace(/^\//, '')
        .replace(/\.m?js$/, '');
      for (const candidate of [`${subpath || 'index'}.mjs`, `${subpath}/index.mjs`]) {
        const file = path.join(graphqlDir, candidate);
        if (
          await access(file).then(
            () => true,
            () => false,
          )
        )
          return { path: file };
      }
      return undefined;
    });
  },
};

/** fastify-openapi-glue imports the validator shim (see its header) instead of the full OpenAPI validator. */
const openapiGlueWithoutMetaSchemaCheck = {
  name: 'openapi-glue-without-meta-schema-check',
  setup(build) {
    const shim = path.join(root, 'scripts/build-shims/openapi-schema-validator.mjs');
    let glueDir;
    build.onResolve({ filter: /^@seriousme\/openapi-schema-validator$/ }, async (args) => {
      if (args.pluginData?.real) return undefined; // esbuild's own resolution, asked for below
      if (args.importer !== shim) {
        glueDir = args.resolveDir;
        return { path: shim };
      }
      // The shim's own import: the real package, as fastify-openapi-glue would have resolved it.
      return build.resolve(args.path, { kind: args.kind, resolveDir: glueDir, pluginData: { real: true } });
    });
  },
};

/**
 * apps/api/dist/main.js: turns on Node's on-disk compile cache (Node >= 22.1; absent on 20, where this is a no-op)
 * before importing the bundle, so starts after the first skip compiling its megabytes of JavaScript.
 */
const LAUNCHER = `// Production entry written by scripts/build.mjs: compile cache on (Node >= 22.1), then the bundled server.
import module from 'node:module';
module.enableCompileCache?.();
await import('./server.js');
`;

/**
 * Fails when the bundle holds graphql from two package folders (two versions, or one copied twice), or any of its
 * CommonJS files beside the ES modules (graphqlAsEsm): a `.js` and an `.mjs` copy of one module are two classes too.
 */
function assertSingleGraphql(metafile) {
  const copies = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const match = /(?:^|\/)node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?graphql\//.exec(input);
    if (!match) continue;
    copies.add(input.slice(0, match.index + match[0].length));
    if (!input.endsWith('.mjs')) throw new Error(`the bundle contains graphql's CommonJS ${input} beside its ES modules`);
  }
  if (copies.size > 1) throw new Error(`the bundle contains ${copies.size} copies of graphql:\n  ${[...copies].join('\n  ')}`);
  if (copies.size === 0) throw new Error('the bundle contains no graphql (metafile check is out of date)');
}

/**
 * The REST contract beside the bundle, as written (openapi.yaml, served at /openapi.yaml) and parsed by the same YAML
 * parser the server uses (openapi.json): the build serves the contract it was built from, and a start reads JSON
 * instead of parsing 3,000 lines of YAML (openapi-contract.ts).
 */
async function writeContract() {
  const text = await readFile(path.join(root, 'openapi/openapi.yaml'), 'utf8');
  const jsYaml = await import(pathToFileURL(createRequire(path.join(root, 'apps/api/package.json')).resolve('js-yaml')).href);
  await writeFile(path.join(outdir, 'openapi.yaml'), text);
  await writeFile(path.join(outdir, 'openapi.json'), JSON.stringify(jsYaml.load(text, { schema: jsYaml.CORE_SCHEMA })));
}

/**
 * dist/pglite-initial/: the embedded database's data directory with every migration applied, which a first start
 * copies instead of running initdb and the migrations (pglite-worker.js): seconds of CPU, and a process that peaked at
 * ~1 GB, before a newcomer's first page. Cached by the migrations and PGlite's version (migrated-template.ts), so a
 * build whose migrations did not change only copies it. A build where it cannot be made still serves: the first
 * start then initialises as before.
 */
async function writeInitialDataDirectory() {
  const made = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/pglite-initial.ts', path.join(outdir, 'pglite-initial')], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  if (made.status !== 0) console.warn(`build: no dist/pglite-initial (a first start will run initdb): ${made.stderr.trim().split('\n').at(-1)}`);
}

/** The migration files (repository-relative): a build's initial data directory holds them all. */
async function migrationFiles() {
  const entries = await readdir(path.join(root, 'prisma/migrations'), { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));
}

/** Where a build records what it was made from (its inputs' paths and a stamp of their sizes and times). */
const STAMP_FILE = path.join(outdir, 'build-stamp.json');

/** A stamp of `files` (repository-relative): each one's path, size and modification time; a missing file changes it. */
async function stampOf(files) {
  const hash = createHash('sha256');
  // All at once: one after another, the ~2,000 stats were ~120 ms of every `pnpm start`.
  const infos = await Promise.all(files.map((file) => stat(path.join(root, file)).catch(() => undefined)));
  files.forEach((file, i) => {
    const info = infos[i];
    hash.update(`${file}\0${info ? `${info.size}\0${info.mtimeMs}` : 'missing'}\n`);
  });
  return hash.digest('hex');
}

/** Whether apps/api/dist was built from the files as they are now (`pnpm start` then starts without rebuilding). */
export async function buildIsCurrent() {
  const recorded = await readFile(STAMP_FILE, 'utf8').then(JSON.parse, () => undefined);
  return recorded !== undefined && recorded.stamp === (await stampOf(recorded.files));
}

export async function build() {
  // Loaded here: `pnpm start` (scripts/start.mjs) imports this file for buildIsCurrent alone.
  const esbuild = await import('esbuild');
  await rm(outdir, { recursive: true, force: true });
  await mkdir(outdir, { recursive: true });
  const result = await esbuild.build({
    entryPoints: {
      server: path.join(root, 'apps/api/src/main.ts'), // started by main.js (LAUNCHER)
      // The embedded database's thread, started by embedded-database.ts at new URL('./pglite-worker.js', import.meta.url).
      'pglite-worker': path.join(root, 'packages/db/src/embedded/pglite-worker.js'),
    },
    outdir,
    absWorkingDir: root, // the metafile's paths, recorded in the stamp, are relative to the repository
    bundle: true,
    splitting: true, // lazily imported parts (Prisma's query compiler, the schema engine glue) load only when used
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    sourcemap: true,
    // Less text for V8 to scan at start; identifiers are kept, so class and function names (error names, logs) stay.
    minifyWhitespace: true,
    minifySyntax: true,
    metafile: true,
    logLevel: 'warning',
    external: EXTERNAL,
    chunkNames: '[name]-[hash]', // beside main.js: bundled code finds its runtime files at new URL('./…', import.meta.url)
    // CommonJS packages inside an ESM bundle call require() for Node built-ins and read __dirname.
    banner: {
      js: [
        "import { createRequire as __bundleCreateRequire } from 'node:module';",
        "import { fileURLToPath as __bundleFileURLToPath } from 'node:url';",
        'const require = __bundleCreateRequire(import.meta.url);',
        'const __filename = __bundleFileURLToPath(import.meta.url);',
        "const __dirname = __bundleFileURLToPath(new URL('.', import.meta.url));",
      ].join('\n'),
    },
    plugins: [graphqlAsEsm, graphqlProductionInstanceOf, openapiGlueWithoutMetaSchemaCheck],
  });
  assertSingleGraphql(result.metafile);
  await Promise.all(RUNTIME_FILES.map((file) => copyFile(file, path.join(outdir, path.basename(file)))));
  await cp(swaggerUiStatic, path.join(outdir, 'static'), { recursive: true });
  await writeContract();
  await writeInitialDataDirectory();
  await writeFile(path.join(outdir, 'package.json'), '{ "type": "module" }\n');
  await writeFile(path.join(outdir, 'main.js'), LAUNCHER);
  // What this build was made from: every file esbuild read (sources and packages), the files copied beside it, the
  // contract, and this script. A later `build.mjs --if-stale` rebuilds only when one of them changed.
  const files = [
    ...Object.keys(result.metafile.inputs),
    ...RUNTIME_FILES.map((file) => path.relative(root, file)),
    'openapi/openapi.yaml',
    'scripts/build.mjs',
    'scripts/pglite-initial.ts',
    ...(await migrationFiles()),
    'pnpm-lock.yaml',
  ].filter((file) => !file.includes(':'));
  await writeFile(STAMP_FILE, JSON.stringify({ stamp: await stampOf(files), files }));
  return result;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  // `--if-stale`: nothing to do when nothing the existing build was made from has changed (scripts/start.mjs, behind
  // `pnpm start`, asks buildIsCurrent itself).
  if (process.argv.includes('--if-stale') && (await buildIsCurrent())) {
    console.log('apps/api/dist is current (nothing it was built from has changed): not rebuilt');
    process.exit(0);
  }
  const started = performance.now();
  const result = await build();
  const bytes = Object.values(result.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
  console.log(
    `built apps/api/dist/main.js + server.js (${(bytes / 1e6).toFixed(1)} MB with chunks) in ${Math.round(performance.now() - started)} ms`,
  );
}
