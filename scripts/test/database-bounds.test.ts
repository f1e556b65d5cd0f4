// The contract's bounds against a migrated database (scripts/contracts/database-bounds.ts, a step of `pnpm
// contracts:check`), on copies of the repository's contract and migrations: today's agree; a bound moved on one side
// only fails, naming openapi.yaml, the migration file, the field and both bounds.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createTestDatabase, type Database } from '@users-posts/db/testing';
import { databaseBoundProblems, type SqlSession } from '../contracts/database-bounds.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const work = mkdtempSync(path.join(os.tmpdir(), 'database-bounds-'));
const INIT = 'prisma/migrations/20261122032513_init/migration.sql';

const sessionOf = (database: Database): SqlSession => ({ query: (sql) => database.prisma.$queryRawUnsafe(sql) });

/** Replaces one exact occurrence (failing loudly if the contract no longer has it). */
function replaceOnce(text: string, from: string, to: string): string {
  expect(text.split(from)).toHaveLength(2);
  return text.replace(from, to);
}

/** A copy of the contract and the migration history, openapi.yaml edited by `edit`, `migrations` added (folder → SQL). */
function copyOfRepository(name: string, edit: (yaml: string) => string = (yaml) => yaml, migrations: Record<string, string> = {}): string {
  const root = path.join(work, name);
  cpSync(path.join(repoRoot, 'prisma'), path.join(root, 'prisma'), { recursive: true });
  mkdirSync(path.join(root, 'openapi'));
  writeFileSync(path.join(root, 'openapi/openapi.yaml'), edit(readFileSync(path.join(repoRoot, 'openapi/openapi.yaml'), 'utf8')));
  for (const [folder, sql] of Object.entries(migrations)) {
    mkdirSync(path.join(root, 'prisma/migrations', folder));
    writeFileSync(path.join(root, 'prisma/migrations', folder, 'migration.sql'), sql);
  }
  return root;
}

const userNameMax = (max: number) => (yaml: string) =>
  replaceOnce(
    yaml,
    '    UserName:\n      type: string\n      minLength: 1\n      maxLength: 100\n',
    `    UserName:\n      type: string\n      minLength: 1\n      maxLength: ${max}\n`,
  );

/** A database migrated by the repository's history, plus `sql`: what a migration added to a copy would have done. */
async function databaseWith(sql: string): Promise<Database> {
  const database = await createTestDatabase();
  await database.prisma.$executeRawUnsafe(sql);
  return database;
}

let shared: Database;
beforeAll(async () => {
  shared = await createTestDatabase();
});
afterAll(async () => {
  await shared.close();
  rmSync(work, { recursive: true, force: true });
});

describe('the database agrees with the contract', () => {
  test("today's contract and migrations agree", async () => {
    expect(await databaseBoundProblems(repoRoot, sessionOf(shared))).toEqual([]);
  });

  test('a user name raised to 300 characters in openapi.yaml alone fails, naming both files and both bounds', async () => {
    const problems = await databaseBoundProblems(copyOfRepository('name-300', userNameMax(300)), sessionOf(shared));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      new RegExp(
        "^User\\.name: openapi/openapi\\.yaml's UserName \\(in [A-Za-z, ]*CreateUserInput[A-Za-z, ]*\\) allows 1–300 characters; " +
          `the database allows 1–100 characters \\(constraint users_name_length of ${INIT}\\)$`,
      ),
    );
    // The probes' tables and function are gone again: the check leaves the database as it found it.
    expect(await shared.prisma.$queryRawUnsafe(`SELECT nspname FROM pg_namespace WHERE nspname = 'contracts_probe'`)).toEqual([]);
  });

  test('a contract narrower than the database fails too: the database would keep what every door refuses', async () => {
    const narrower = (yaml: string) =>
      replaceOnce(
        replaceOnce(
          yaml,
          '    PostTitle:\n      type: string\n      minLength: 1\n      maxLength: 200\n',
          '    PostTitle:\n      type: string\n      minLength: 1\n      maxLength: 150\n',
        ),
        '    OrderQuantity:\n      type: integer\n      minimum: 1\n      maximum: 1000\n',
        '    OrderQuantity:\n      type: integer\n      minimum: 2\n      maximum: 1000\n',
      );
    expect(await databaseBoundProblems(copyOfRepository('narrower', narrower), sessionOf(shared))).toEqual([
      `Post.title: openapi/openapi.yaml's PostTitle (in CreatePostInput) allows 1–150 characters; the database allows 1–200 characters (constraint posts_title_length of ${INIT})`,
      `Order.quantity: openapi/openapi.yaml's OrderQuantity (in CreateOrderInput) allows 2–1000; the database allows 1–1000 (constraint orders_quantity_range of ${INIT})`,
    ]);
  });

  test('an order status the database enum lacks fails, naming the enum, its migration and both lists', async () => {
    const refunded = (yaml: string) =>
      replaceOnce(yaml, 'enum: [pending, paid, shipped, cancelled]', 'enum: [pending, paid, shipped, cancelled, refunded]');
    expect(await databaseBoundProblems(copyOfRepository('refunded', refunded), sessionOf(shared))).toEqual([
      `Order.status: openapi/openapi.yaml's OrderStatus (in UpdateOrderInput) lists pending, paid, shipped, cancelled, refunded; the database's enum "OrderStatus" ` +
        `(${INIT}) lists pending, paid, shipped, cancelled (the same values in the same order: sorting by it follows that order)`,
    ]);
  });

  test("a migration that widens the name's constraint agrees with a 300 contract, and is the file named against a 100 one", async () => {
    const widen = `ALTER TABLE "users" DROP CONSTRAINT "users_name_length", ADD CONSTRAINT "users_name_length" CHECK (char_length("name") BETWEEN 1 AND 300);\n`;
    const database = await databaseWith(widen);
    try {
      const migrations = { '29991231000000_longer_names': widen };
      expect(await databaseBoundProblems(copyOfRepository('widened-300', userNameMax(300), migrations), sessionOf(database))).toEqual([]);
      const [problem, ...others] = await databaseBoundProblems(copyOfRepository('widened-100', undefined, migrations), sessionOf(database));
      expect(others).toEqual([]);
      expect(problem).toMatch(
        /allows 1–100 characters; the database allows 1–300 characters \(constraint users_name_length of prisma\/migrations\/29991231000000_longer_names\/migration\.sql\)$/,
      );
    } finally {
      await database.close();
    }
  });

  test('a column no constraint bounds fails, naming the migration that made its table', async () => {
    const drop = 'ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_name_length";\n';
    const database = await databaseWith(drop);
    try {
      const root = copyOfRepository('unbounded', undefined, { '29991231000000_drop_api_key_name_length': drop });
      expect(await databaseBoundProblems(root, sessionOf(database))).toEqual([
        "ApiKey.name: openapi/openapi.yaml's CreateApiKeyInput.name allows 1–100 characters; the database allows 0–∞ characters " +
          '(no constraint: add a CHECK in a new migration; the table comes from prisma/migrations/20261122040224_auth/migration.sql)',
      ]);
    } finally {
      await database.close();
    }
  });
});
