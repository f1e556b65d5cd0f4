// `pnpm contracts:check`: fails on stale generated code, a GraphQL root field without an access decision, a contract
// field neither stored nor resolved, an OpenAPI example its schema refuses, a database whose constraints disagree with
// the contract's bounds, server/contract drift, or a breaking contract change. It leaves nothing in the temporary
// directory (scripts/test/contracts-check-leftovers.test.ts). Breaking changes are judged by scripts/contracts/evolution.ts:
// deprecation and sunset, recorded usage, and contracts/approvals.yaml.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { authDecisionProblems, introspectionProblems } from './contracts/auth-decisions.js';
import { generateContracts, repoRoot } from './contracts/generate.js';
import { graphqlDrift, restDrift } from './contracts/drift.js';
import { checkPrivateFields } from './contracts/private-fields.js';
import { checkExamples } from './contracts/examples.js';
import { checkStorage } from './contracts/storage.js';
import { databaseBoundProblems } from './contracts/database-bounds.js';
import { defaultBaseRev, GRAPHQL_CONTRACT, OPENAPI_CONTRACT } from './contracts/breaking.js';
import { checkEvolution, graphqlSunsetProblems, openapiSunsetProblems, withoutSeparator } from './contracts/evolution.js';

// `--usage <file>` (else CONTRACTS_USAGE, else contracts/usage.json) and `--window-days <n>` (else
// CONTRACTS_USAGE_WINDOW_DAYS, else 30): who used what, and for how long back (docs/contracts-check.md).
const { values: options } = parseArgs({
  args: withoutSeparator(process.argv.slice(2)),
  options: { usage: { type: 'string' }, 'window-days': { type: 'string' } },
});
const usagePath = path.resolve(repoRoot, options.usage ?? process.env.CONTRACTS_USAGE ?? 'contracts/usage.json');
const windowDays = Number(options['window-days'] ?? process.env.CONTRACTS_USAGE_WINDOW_DAYS ?? 30);
if (!Number.isInteger(windowDays) || windowDays < 1) {
  console.error(`--window-days (CONTRACTS_USAGE_WINDOW_DAYS) must be a whole number of days, not ${String(windowDays)}`);
  process.exit(2);
}

type Check = () => Promise<string[]>;
let failed = false;

// A database migrated by prisma/migrations, for its constraints: an in-memory copy of the cached migrated template
// (with DATABASE_URL, a throwaway database on that server, dropped on close), as the test suites get theirs. Opened
// now, so that it loads while the Prisma CLI replays the history below in its own process.
const { createTestDatabase } = await import('@users-posts/db/testing');
const migrated = createTestDatabase();
migrated.catch(() => undefined); // reported by the check that awaits it
// The Prisma CLI's replay of prisma/migrations against the model (its own process, ~7 s): started now so that it runs
// while the checks before its own step do (issue 41: the gate under 15 s), reported by that step.
const pendingMigration = import('./db-migration.js').then(({ pendingMigrationSql }) => pendingMigrationSql());
pendingMigration.catch(() => undefined);
// The breaking-change comparison (in this process, 2–4 s of Optic) starts now too: it fills the wait for the Prisma CLI.
const baseRev = await defaultBaseRev(repoRoot);
const evolution = checkEvolution(repoRoot, baseRev, { usagePath, windowDays });
evolution.catch(() => undefined);

async function run(name: string, check: Check): Promise<void> {
  let problems: string[];
  const started = performance.now();
  try {
    problems = await check();
  } catch (error) {
    problems = [`check crashed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`];
  }
  // How long each check took, and the process's memory after it: where `pnpm contracts:check`'s time and memory go.
  const cost = `(${((performance.now() - started) / 1000).toFixed(1)} s, ${Math.round(process.memoryUsage.rss() / 2 ** 20)} MB)`;
  if (problems.length === 0) {
    console.log(`✓ ${name} ${cost}`);
    return;
  }
  failed = true;
  console.log(`✗ ${name} ${cost}`);
  for (const problem of problems) console.log(problem.replace(/^/gm, '    '));
}

await run('generated contract files are up to date', async () => {
  const stale: string[] = [];
  for (const file of await generateContracts()) {
    const committed = await readFile(path.join(repoRoot, file.path), 'utf8').catch(() => undefined);
    if (committed !== file.content) {
      stale.push(`${file.path} is ${committed === undefined ? 'missing' : 'stale'}: run \`pnpm codegen\` and commit it`);
    }
  }
  return stale;
});

await run('the contracts agree on private fields (@private in schema.graphql, x-private in openapi.yaml)', () => checkPrivateFields(repoRoot));

await run('every GraphQL Query, Mutation and Subscription field has @auth or @public', async () =>
  authDecisionProblems(await readFile(path.join(repoRoot, 'schema/schema.graphql'), 'utf8')),
);

await run('every GraphQL root type, root field and argument is described, and each root field says who may call it', async () =>
  introspectionProblems(await readFile(path.join(repoRoot, 'schema/schema.graphql'), 'utf8')),
);

await run('every contract field is a Prisma field, or resolved or stored by the server (prisma/schema.prisma, storage-mapping.ts)', async () => {
  const { COMPUTED_FIELDS, STORED_BY_HAND } = await import('../apps/api/src/services/storage-mapping.js');
  const { resolvers } = await import('../apps/api/src/graphql/schema/resolvers/index.js');
  return checkStorage(repoRoot, { storedByHand: STORED_BY_HAND, computedFields: COMPUTED_FIELDS, resolvers });
});

await run('every example of openapi.yaml validates against its schema', () => checkExamples(repoRoot));

await run('prisma/migrations build prisma/schema.prisma (no model change without its migration)', async () => {
  const sql = await pendingMigration;
  if (sql === null) return [];
  const statements = sql.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('--'));
  return [
    'prisma/schema.prisma has changes no migration of prisma/migrations holds: run `pnpm db:migration <name>`, read it, commit it. Missing:',
    ...statements.map((line) => `  ${line}`),
  ];
});

await run("the migrated database stores what openapi.yaml's inputs accept (lengths, ranges, enums; prisma/migrations)", async () => {
  const database = await migrated;
  try {
    return await databaseBoundProblems(repoRoot, { query: (sql) => database.prisma.$queryRawUnsafe(sql) });
  } finally {
    await database.close();
  }
});

const { buildApp } = await import('../apps/api/src/app.js');
const { loadConfig } = await import('../apps/api/src/config/config.js');
const { operationHandlers } = await import('../apps/api/src/rest/operations.js');
const { createDatabase } = await import('@users-posts/db');
// On a PostgreSQL the app never reaches (nothing listens on port 1): the drift checks read its routes and its schema,
// never a row, and opening the embedded database for them made this process peak at 1.2 GB (PGlite's memory).
const database = await createDatabase({ databaseUrl: 'postgresql://contracts-check@127.0.0.1:1/unreached', migrate: false });
// The app as `pnpm start` configures it (development secrets generated into a throwaway data directory), quiet.
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'contracts-check-'));
try {
  const app = await buildApp(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), { database });
  try {
    await run('served GraphQL schema equals schema/schema.graphql', () => graphqlDrift(app, repoRoot));
    await run('REST routes match openapi/openapi.yaml', () => restDrift(app, repoRoot, new Set(Object.keys(operationHandlers))));
  } finally {
    await app.close();
  }
} finally {
  await rm(dataDir, { recursive: true, force: true });
}

await run('every deprecation carries a sunset date (x-sunset in openapi.yaml, "Sunset: YYYY-MM-DD." in schema.graphql)', async () => [
  ...openapiSunsetProblems(await readFile(path.join(repoRoot, OPENAPI_CONTRACT), 'utf8')),
  ...graphqlSunsetProblems(await readFile(path.join(repoRoot, GRAPHQL_CONTRACT), 'utf8')),
]);

await run(`no breaking contract change against ${baseRev ?? '(no base revision)'}, but those unused or approved`, async () => {
  if (!baseRev) console.log('    skipped: no base revision (set CONTRACTS_BASE)');
  const verdict = await evolution;
  for (const note of verdict.notes) console.log(`    ${note}`);
  // What passes with a warning (unused within the window, or approved) is printed whether the step passes or not.
  for (const block of verdict.passed) console.log(block.replace(/^/gm, '    '));
  return verdict.failures;
});

process.exit(failed ? 1 : 0);
