// `pnpm contracts:check`: fails on stale generated code, a GraphQL root field without an access decision, a contract
// field neither stored nor resolved, an OpenAPI example its schema refuses, a database whose constraints disagree with
// the contract's bounds, server/contract drift, or a breaking contract change. It leaves nothing in the temporary
// directory (scripts/test/contracts-check-leftovers.test.ts).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { authDecisionProblems, introspectionProblems } from './contracts/auth-decisions.js';
import { generateContracts, repoRoot } from './contracts/generate.js';
import { graphqlDrift, restDrift } from './contracts/drift.js';
import { checkPrivateFields } from './contracts/private-fields.js';
import { checkExamples } from './contracts/examples.js';
import { checkStorage } from './contracts/storage.js';
import { databaseBoundProblems } from './contracts/database-bounds.js';
import { checkBreakingAgainst, declaredBreakingChanges, defaultBaseRev, undeclared, type Change } from './contracts/breaking.js';

type Check = () => Promise<string[]>;
let failed = false;

// A database migrated by prisma/migrations, for its constraints: an in-memory copy of the cached migrated template
// (with DATABASE_URL, a throwaway database on that server, dropped on close), as the test suites get theirs. Opened
// now, so that it loads while the Prisma CLI replays the history below in its own process.
const { createTestDatabase } = await import('@users-posts/db/testing');
const migrated = createTestDatabase();
migrated.catch(() => undefined); // reported by the check that awaits it

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
  for (const problem of problems) console.log(`    ${problem}`);
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
  const { pendingMigrationSql } = await import('./db-migration.js');
  const sql = await pendingMigrationSql();
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

const baseRev = await defaultBaseRev(repoRoot);
await run(`no breaking contract change against ${baseRev ?? '(no base revision)'}`, async () => {
  if (!baseRev) {
    console.log('    skipped: no base revision (set CONTRACTS_BASE)');
    return [];
  }
  const result = await checkBreakingAgainst(baseRev, repoRoot);
  if (result.skipped) console.log(`    skipped: ${result.skipped}`);
  const show = (change: Change) => `[${change.contract}] ${change.message}${change.path ? ` (${change.path})` : ''}`;
  const declarations = result.changes.length > 0 ? await declaredBreakingChanges(baseRev, repoRoot) : [];
  const failing = undeclared(result.changes, declarations);
  // Declared by the commit that made them (`BREAKING CHANGE:` footer): shown with the declaration, not failed.
  for (const declaration of declarations) {
    const excused = result.changes.filter((change) => undeclared([change], [declaration]).length === 0);
    if (excused.length === 0) continue;
    console.log(`    declared breaking by ${declaration.commit.slice(0, 12)}: ${declaration.reason}`);
    for (const change of excused) console.log(`      ${show(change)}`);
  }
  return failing.map(show);
});

process.exit(failed ? 1 : 0);
