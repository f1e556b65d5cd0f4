// The contract's bounds against the database's (SPEC §0.1): for every column an input of openapi.yaml writes
// (CreateUserInput.name → users.name), the database migrated by prisma/migrations stores exactly what the contract
// accepts: the same lengths (minLength/maxLength), the same integer range (minimum/maximum), the same enum values in
// the same order.
//
// Read from a migrated database, not from the SQL text: a later migration may drop, replace or widen a constraint, a
// domain or a type, and only the database knows what the history adds up to. And asked, not parsed: each bound is tried
// on a copy of the table (`LIKE … INCLUDING CONSTRAINTS`: the column types and every CHECK, without keys, triggers or
// rows), at the bound and one past it, so `char_length(name) BETWEEN 1 AND 100`, `length(name) < 101`, a VARCHAR(100)
// or a domain all answer the same way without a reader of CHECK expressions. When the two disagree, the database's
// bound is found by bisection (an accepted range is assumed to be one interval) and named with what sets it: the
// constraint, and the migration file that last names it, or the column's type.
//
// Compared: the columns the contract's inputs write (what a client can send). Representation-only fields (ids,
// timestamps) are the server's to fill. A field the contract leaves unbounded on one side is not compared on that side.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parseYaml } from './yaml.js';
import { modelOfInput, OPENAPI, PRISMA, prismaModels, type PrismaModels } from './storage.js';

const MIGRATIONS = 'prisma/migrations';
/** The probes' schema in the migrated database: created, used and dropped by one check. */
const PROBE = 'contracts_probe';
/** How far the bisection looks past a contract's bound: lengths up to 64 Ki characters (or twice the bound), integers up to 2^53. */
const LENGTH_CEILING = 2 ** 16;
const INTEGER_CEILING = Number.MAX_SAFE_INTEGER;
const INT32: [number, number] = [-(2 ** 31), 2 ** 31 - 1];

/** A connection to a migrated database that runs one statement and answers its rows. */
export interface SqlSession {
  query<T extends object>(sql: string): Promise<T[]>;
}

type Bounds =
  | { kind: 'length'; min: number; max: number | undefined }
  | { kind: 'integer'; min: number | undefined; max: number | undefined }
  | { kind: 'enum'; values: string[] };

/** A column an input of the contract writes, and the contract's bounds on it. */
export interface BoundedField {
  model: string;
  field: string;
  table: string;
  column: string;
  /** Where the bound is declared: the referenced schema (`UserName`), or the property itself (`CreateApiKeyInput.name`). */
  rule: string;
  /** The inputs that write the column with this rule. */
  writers: string[];
  bounds: Bounds;
}

type Schema = Record<string, unknown>;
type Document = { components?: { schemas?: Record<string, Schema> } };

const typesOf = (schema: Schema): string[] => (Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string]);
const numberOr = (value: unknown, fallback: number | undefined) => (typeof value === 'number' ? value : fallback);

/** The bounds a schema declares, or undefined when it declares none this check compares. */
function boundsOf(schema: Schema): Bounds | undefined {
  const types = typesOf(schema);
  if (Array.isArray(schema.enum) && schema.enum.every((value) => typeof value === 'string')) return { kind: 'enum', values: schema.enum };
  if (types.includes('string')) {
    const min = numberOr(schema.minLength, 0)!;
    const max = numberOr(schema.maxLength, undefined);
    return min > 0 || max !== undefined ? { kind: 'length', min, max } : undefined;
  }
  if (types.includes('integer')) {
    const int32 = schema.format === 'int32';
    const exclusiveMin = typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : undefined;
    const exclusiveMax = typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum - 1 : undefined;
    const min = numberOr(schema.minimum, exclusiveMin ?? (int32 ? INT32[0] : undefined));
    const max = numberOr(schema.maximum, exclusiveMax ?? (int32 ? INT32[1] : undefined));
    return min !== undefined || max !== undefined ? { kind: 'integer', min, max } : undefined;
  }
  return undefined;
}

/** Every column an input schema of the contract writes with a bound (modelOfInput names the model, as storage.ts does). */
export function boundedFields(document: Document, models: PrismaModels): BoundedField[] {
  const schemas = document.components?.schemas ?? {};
  const fields = new Map<string, BoundedField>();
  for (const [name, schema] of Object.entries(schemas)) {
    const model = modelOfInput(name, models);
    if (!model) continue;
    const { table, columnNames } = models.get(model)!;
    for (const [field, property] of Object.entries((schema.properties as Record<string, Schema> | undefined) ?? {})) {
      const column = columnNames.get(field);
      if (column === undefined) continue; // stored by hand (password → passwordHash): storage.ts's concern
      let rule = `${name}.${field}`;
      let resolved: Schema | undefined = property;
      for (let hops = 0; typeof resolved?.$ref === 'string' && hops < 8; hops++) {
        rule = resolved.$ref.replace('#/components/schemas/', '');
        resolved = schemas[rule];
      }
      const bounds = resolved && boundsOf(resolved);
      if (!bounds) continue;
      const key = JSON.stringify([model, field, rule, bounds]);
      const known = fields.get(key);
      if (known) known.writers.push(name);
      else fields.set(key, { model, field, table, column, rule, writers: [name], bounds });
    }
  }
  return [...fields.values()];
}

/** What the database said to a value: nothing (stored), or the refusal, with the constraint when one refused it. */
type Refusal = { constraint: string | null; message: string } | null;

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** The probes' tables and the function that tries one value: an INSERT in a subtransaction, its error caught. */
async function prepareProbes(session: SqlSession, tables: string[]): Promise<void> {
  await session.query(`DROP SCHEMA IF EXISTS ${PROBE} CASCADE`);
  await session.query(`CREATE SCHEMA ${PROBE}`);
  await session.query(`CREATE FUNCTION ${PROBE}.refusal(target regclass, col text, val text) RETURNS text LANGUAGE plpgsql AS $fn$
    DECLARE constraint_name text; message text;
    BEGIN
      EXECUTE format('INSERT INTO %s (%I) VALUES (%L)', target, col, val);
      RETURN NULL;
    EXCEPTION WHEN others THEN
      GET STACKED DIAGNOSTICS constraint_name = CONSTRAINT_NAME, message = MESSAGE_TEXT;
      RETURN json_build_object('constraint', nullif(constraint_name, ''), 'message', message)::text;
    END $fn$`);
  for (const table of tables) {
    const copy = `${PROBE}.${ident(table)}`;
    await session.query(`CREATE TABLE ${copy} (LIKE ${ident(table)} INCLUDING CONSTRAINTS)`);
    // NOT NULL comes with LIKE: the probe sets one column, the others stay null (a CHECK passes on null).
    const notNull = await session.query<{ name: string }>(
      `SELECT attname AS name FROM pg_attribute WHERE attrelid = ${literal(copy)}::regclass AND attnum > 0 AND NOT attisdropped AND attnotnull`,
    );
    if (notNull.length)
      await session.query(`ALTER TABLE ${copy} ${notNull.map(({ name }) => `ALTER COLUMN ${ident(name)} DROP NOT NULL`).join(', ')}`);
  }
}

/** One value to try on a column: a length (of `x`s) or a literal, as a client's text would be read by the column's type. */
type Probe = { table: string; column: string } & ({ length: number } | { text: string });

/** The database's answers to many probes, in one statement. */
async function tryValues(session: SqlSession, probes: Probe[]): Promise<Refusal[]> {
  if (probes.length === 0) return [];
  const rows = probes.map(
    (probe, index) =>
      `(${index}, ${literal(`${PROBE}.${ident(probe.table)}`)}, ${literal(probe.column)}, ${'length' in probe ? `repeat('x', ${probe.length})` : literal(probe.text)})`,
  );
  const answers = await session.query<{ refusal: string | null }>(
    `SELECT ${PROBE}.refusal(target::regclass, col, val) AS refusal FROM (VALUES ${rows.join(', ')}) AS probe(n, target, col, val) ORDER BY n`,
  );
  return answers.map(({ refusal }) => (refusal === null ? null : (JSON.parse(refusal) as Refusal)));
}

/** The migrations, oldest first, to name the one that last mentions a constraint, type or table. */
async function readMigrationFiles(repoRoot: string): Promise<{ file: string; sql: string }[]> {
  const folders = (await readdir(path.join(repoRoot, MIGRATIONS), { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort((a, b) => a.localeCompare(b));
  return Promise.all(
    folders.map(async (folder) => {
      const file = `${MIGRATIONS}/${folder}/migration.sql`;
      return { file, sql: await readFile(path.join(repoRoot, file), 'utf8').catch(() => '') };
    }),
  );
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** An accepted interval of lengths or integers, each side with the refusal just past it (none: no bound found). */
interface Range {
  min: number | undefined;
  max: number | undefined;
  belowMin: Refusal;
  aboveMax: Refusal;
}

/**
 * The database's accepted interval around an accepted value `start`: on each side, doubling steps until a value is
 * refused (or `floor`/`ceiling` is reached and accepted: no bound there), then bisection between the two.
 */
async function acceptedRange(start: number, floor: number, ceiling: number, attempt: (value: number) => Promise<Refusal>): Promise<Range> {
  const side = async (direction: 1 | -1, limit: number): Promise<[number | undefined, Refusal]> => {
    let inside = start;
    let outside: number | undefined;
    let refusal: Refusal = null;
    for (let step = 1; outside === undefined; step *= 2) {
      const next = direction > 0 ? Math.min(start + step, limit) : Math.max(start - step, limit);
      if (next === inside) return [undefined, null];
      const answer = await attempt(next);
      if (answer) [outside, refusal] = [next, answer];
      else inside = next;
    }
    let gap: number = outside;
    while (Math.abs(gap - inside) > 1) {
      const middle: number = inside + Math.trunc((gap - inside) / 2);
      const answer = await attempt(middle);
      if (answer) [gap, refusal] = [middle, answer];
      else inside = middle;
    }
    return [inside, refusal];
  };
  const [max, aboveMax] = await side(1, ceiling);
  const [min, belowMin] = await side(-1, floor);
  return { min: min ?? (floor === 0 ? 0 : undefined), max, belowMin, aboveMax };
}

const showRange = (min: number | undefined, max: number | undefined) => `${min ?? '−∞'}–${max ?? '∞'}`;

/**
 * Where the contracts' bounds and the migrated database's disagree, one line per field naming openapi.yaml, the
 * migration file and both bounds. `session` is a database migrated by `repoRoot`'s prisma/migrations.
 */
export async function databaseBoundProblems(repoRoot: string, session: SqlSession): Promise<string[]> {
  const read = (file: string) => readFile(path.join(repoRoot, file), 'utf8');
  const [yaml, prisma, migrations] = await Promise.all([read(OPENAPI), read(PRISMA), readMigrationFiles(repoRoot)]);
  const fields = boundedFields(parseYaml(yaml) as Document, await prismaModels(prisma));
  const lastMentioning = (pattern: RegExp) => migrations.findLast(({ sql }) => pattern.test(sql))?.file;
  const problems: string[] = [];

  const tables = [...new Set(fields.map((field) => field.table))];
  const columns = await session.query<{ table: string; column: string; type: string; labels: string[] | null }>(
    `SELECT c.relname AS "table", a.attname AS "column", format_type(a.atttypid, a.atttypmod) AS type,
            (SELECT array_agg(e.enumlabel::text ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = a.atttypid) AS labels
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
      WHERE c.oid IN (${tables.map((table) => `to_regclass(${literal(ident(table))})`).join(', ') || 'NULL'})
        AND a.attnum > 0 AND NOT a.attisdropped`,
  );
  const columnOf = (field: BoundedField) => columns.find((row) => row.table === field.table && row.column === field.column);
  const contractSide = ({ rule, writers }: BoundedField) =>
    writers.length === 1 && rule.startsWith(`${writers[0]}.`) ? `${OPENAPI}'s ${rule}` : `${OPENAPI}'s ${rule} (in ${writers.join(', ')})`;
  /** What sets the database's bound on this side: a constraint and its migration, the column's type, or nothing. */
  const source = (field: BoundedField, refusal: Refusal): string => {
    if (refusal?.constraint) {
      const file = lastMentioning(new RegExp(`\\b${escapeRegExp(refusal.constraint)}\\b`)) ?? MIGRATIONS;
      return `constraint ${refusal.constraint} of ${file}`;
    }
    const [table, column] = [escapeRegExp(field.table), escapeRegExp(field.column)];
    const created = lastMentioning(new RegExp(`CREATE TABLE\\s+(IF NOT EXISTS\\s+)?"${table}"`)) ?? MIGRATIONS;
    if (!refusal) return `no constraint: add a CHECK in a new migration; the table comes from ${created}`;
    const typed = lastMentioning(new RegExp(`ALTER TABLE\\s+"${table}"[^;]*ALTER COLUMN\\s+"${column}"\\s+(SET DATA\\s+)?TYPE`, 's'));
    return `the column's type, ${columnOf(field)?.type} (${refusal.message}), of ${typed ?? created}`;
  };

  const present = fields.filter((field) => {
    if (columnOf(field)) return true;
    problems.push(
      `${field.model}.${field.field}: ${contractSide(field)} bounds it, but the migrated database has no column ${field.table}.${field.column} (${MIGRATIONS})`,
    );
    return false;
  });
  // Enum columns: the type's labels, in order (ORDER BY sorts by it). Other enums are probed like the rest.
  const probed = present.filter((field) => {
    const labels = columnOf(field)!.labels;
    if (field.bounds.kind !== 'enum' || !labels) return true;
    if (!isDeepStrictEqual(labels, field.bounds.values)) {
      const type = columnOf(field)!.type;
      const file = lastMentioning(new RegExp(`"${escapeRegExp(type.replaceAll('"', ''))}"`)) ?? MIGRATIONS;
      problems.push(
        `${field.model}.${field.field}: ${contractSide(field)} lists ${field.bounds.values.join(', ')}; the database's enum ${type} ` +
          `(${file}) lists ${labels.join(', ')} (the same values in the same order: sorting by it follows that order)`,
      );
    }
    return false;
  });
  if (probed.length === 0) return problems;

  await prepareProbes(session, [...new Set(probed.map((field) => field.table))]);
  try {
    // First the values at and just past each contract bound, all in one statement; then, for a field they show
    // disagreeing, the database's own bounds, one probe at a time.
    const plans = probed.map((field) => {
      const { bounds } = field;
      if (bounds.kind === 'enum') {
        const outsider = `${bounds.values.join('|')}|(none of these)`;
        return { field, tried: [...bounds.values, outsider].map((text) => [text, text !== outsider] as const) };
      }
      const tried: (readonly [number, boolean])[] = [];
      if (bounds.min !== undefined)
        tried.push([bounds.min, true], ...(bounds.kind === 'length' && bounds.min === 0 ? [] : [[bounds.min - 1, false] as const]));
      if (bounds.max !== undefined) tried.push([bounds.max, true], [bounds.max + 1, false]);
      return { field, tried };
    });
    const probeOf = (field: BoundedField, value: number | string): Probe =>
      typeof value === 'number' && field.bounds.kind === 'length'
        ? { table: field.table, column: field.column, length: value }
        : { table: field.table, column: field.column, text: String(value) };
    const answers = await tryValues(
      session,
      plans.flatMap(({ field, tried }) => tried.map(([value]) => probeOf(field, value))),
    );
    let offset = 0;
    for (const { field, tried } of plans) {
      const mine = answers.slice(offset, (offset += tried.length));
      if (mine.every((refusal, index) => (refusal === null) === tried[index]![1])) continue;
      const { bounds } = field;
      if (bounds.kind === 'enum') {
        const refused = bounds.values.filter((_, index) => mine[index] !== null);
        const outsiderAccepted = mine.at(-1) === null;
        const what = [
          refused.length ? `refuses ${refused.join(', ')} (${source(field, mine[bounds.values.indexOf(refused[0]!)]!)})` : '',
          outsiderAccepted ? `accepts values the contract does not list (${source(field, null)})` : '',
        ].filter(Boolean);
        problems.push(`${field.model}.${field.field}: ${contractSide(field)} lists ${bounds.values.join(', ')}; the database ${what.join(' and ')}`);
        continue;
      }
      const remembered = new Map<number, Refusal>(tried.map(([value], index) => [value as number, mine[index]!]));
      const attempt = async (value: number): Promise<Refusal> => {
        if (!remembered.has(value)) remembered.set(value, (await tryValues(session, [probeOf(field, value)]))[0]!);
        return remembered.get(value)!;
      };
      const unit = bounds.kind === 'length' ? ' characters' : '';
      const contract = `${contractSide(field)} allows ${showRange(bounds.min, bounds.max)}${unit}`;
      const start = [...remembered].find(([, refusal]) => refusal === null)?.[0];
      if (start === undefined) {
        const refusal = [...remembered.values()].find((answer) => answer !== null)!;
        problems.push(`${field.model}.${field.field}: ${contract}; the database refuses every value tried (${source(field, refusal)})`);
        continue;
      }
      const [floor, ceiling] = bounds.kind === 'length' ? [0, Math.max(LENGTH_CEILING, 2 * (bounds.max ?? 0))] : [-INTEGER_CEILING, INTEGER_CEILING];
      const database = await acceptedRange(start, floor, ceiling, attempt);
      // Only the sides the contract bounds are compared (and named).
      const sources = [
        ...(bounds.min !== undefined && database.min !== bounds.min ? [source(field, database.belowMin)] : []),
        ...(bounds.max !== undefined && database.max !== bounds.max ? [source(field, database.aboveMax)] : []),
      ];
      problems.push(
        `${field.model}.${field.field}: ${contract}; the database allows ${showRange(database.min, database.max)}${unit} (${[...new Set(sources)].join('; ')})`,
      );
    }
  } finally {
    await session.query(`DROP SCHEMA IF EXISTS ${PROBE} CASCADE`);
  }
  return problems;
}
