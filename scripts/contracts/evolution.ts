// How the contracts may evolve (SPEC §6): every deprecation carries a sunset date; a breaking change is judged by
// what it removes (not deprecated, or before its sunset: refused), by who used it (the usage file that
// `pnpm contracts:usage export` writes, and the trusted-documents manifest) and by contracts/approvals.yaml.
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isUnionType,
  Kind,
  parse,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type GraphQLSchema,
} from 'graphql';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { changeId, checkBreakingAgainst, contractAt, GRAPHQL_CONTRACT, loadOpenapi, OPENAPI_CONTRACT, type Change } from './breaking.js';
import { MANIFEST_PATH } from './persisted-documents.js';
import { parseYaml } from './yaml.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** The sunset inside a GraphQL deprecation reason: `… Sunset: 2027-03-01.` (schema/schema.graphql documents it). */
const REASON_SUNSET = /\bSunset: (\d{4}-\d{2}-\d{2})\b/;

/** A script's arguments without the `--` that `pnpm <script> -- --flag` may pass on. */
export const withoutSeparator = (args: string[]): string[] => (args[0] === '--' ? args.slice(1) : args);

/** Today as a UTC day, the unit of sunsets, expiries and the usage file. */
export const utcDay = (date = new Date()): string => date.toISOString().slice(0, 10);

const isDay = (value: unknown): value is string => typeof value === 'string' && DATE.test(value) && utcDay(new Date(`${value}T00:00:00Z`)) === value;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

// ---- Deprecations carry a sunset date ------------------------------------------------------------------------------

/** Every `deprecated: true` of openapi.yaml without a valid `x-sunset: YYYY-MM-DD` beside it, by JSON pointer. */
export function openapiSunsetProblems(source: string): string[] {
  const problems: string[] = [];
  const walk = (node: unknown, at: string): void => {
    if (Array.isArray(node)) return node.forEach((item, index) => walk(item, `${at}/${index}`));
    if (!isObject(node)) return;
    if (node.deprecated === true && !isDay(node['x-sunset'])) {
      const given = node['x-sunset'] === undefined ? 'no `x-sunset`' : `\`x-sunset: ${JSON.stringify(node['x-sunset'])}\` is not a date`;
      problems.push(`openapi/openapi.yaml ${at || '/'}: deprecated without a sunset date (${given}; add \`x-sunset: YYYY-MM-DD\`)`);
    }
    for (const [key, value] of Object.entries(node)) walk(value, `${at}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`);
  };
  walk(parseYaml(source), '');
  return problems;
}

/** The definitions whose names make a schema coordinate (`Type.field.argument`, `Enum.VALUE`). */
const NAMED_DEFINITIONS = new Set<string>([
  Kind.OBJECT_TYPE_DEFINITION,
  Kind.OBJECT_TYPE_EXTENSION,
  Kind.INTERFACE_TYPE_DEFINITION,
  Kind.INTERFACE_TYPE_EXTENSION,
  Kind.INPUT_OBJECT_TYPE_DEFINITION,
  Kind.INPUT_OBJECT_TYPE_EXTENSION,
  Kind.ENUM_TYPE_DEFINITION,
  Kind.ENUM_TYPE_EXTENSION,
  Kind.DIRECTIVE_DEFINITION,
  Kind.FIELD_DEFINITION,
  Kind.INPUT_VALUE_DEFINITION,
  Kind.ENUM_VALUE_DEFINITION,
]);

/** Every `@deprecated` of schema.graphql whose reason does not end with `Sunset: YYYY-MM-DD.`, by schema coordinate. */
export function graphqlSunsetProblems(sdl: string): string[] {
  const problems: string[] = [];
  const coordinates: string[] = [];
  visit(parse(sdl), {
    enter(node) {
      if (NAMED_DEFINITIONS.has(node.kind) && 'name' in node && node.name) coordinates.push(node.name.value);
      if (node.kind !== Kind.DIRECTIVE || node.name.value !== 'deprecated') return;
      const reason = node.arguments?.find((argument) => argument.name.value === 'reason')?.value;
      const text = reason?.kind === Kind.STRING ? reason.value : '';
      const sunset = REASON_SUNSET.exec(text)?.[1];
      if (!isDay(sunset)) {
        problems.push(`schema/schema.graphql ${coordinates.join('.')}: deprecated without a sunset date (end the reason with "Sunset: YYYY-MM-DD.")`);
      }
    },
    leave(node) {
      if (NAMED_DEFINITIONS.has(node.kind) && 'name' in node && node.name) coordinates.pop();
    },
  });
  return problems;
}

// ---- What a change touches: its deprecation, and who used it -------------------------------------------------------

export interface Deprecation {
  /** Where the deprecation is declared (a JSON pointer into the base, or a schema coordinate). */
  at: string;
  sunset?: string;
}

interface Subject {
  deprecation?: Deprecation;
  /** REST: the operation and, when the change is about one parameter, that parameter's name. */
  operation?: { operationId: string; parameter?: string };
  /** GraphQL: the schema coordinates whose users the change breaks; undefined when the change cannot be placed. */
  coordinates?: string[];
}

const unescape = (token: string) => decodeURIComponent(token).replaceAll('~1', '/').replaceAll('~0', '~');
const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

type Parameter = { name?: string; in?: string; deprecated?: unknown; 'x-sunset'?: unknown };

/** An OpenAPI change's operation, parameter and deprecation, read from the inlined base (and head) documents. */
function openapiSubject(change: Change, base: unknown, head: unknown): Subject {
  const tokens = (change.path ?? '').split('/').slice(1).map(unescape);
  const [root, route, method, ...rest] = tokens;
  if (root !== 'paths' || route === undefined || method === undefined || !METHODS.has(method)) return {};
  const operationIn = (doc: unknown) => {
    const item = isObject(doc) && isObject(doc.paths) ? doc.paths[route] : undefined;
    return isObject(item) && isObject(item[method]) ? { item, operation: item[method] } : undefined;
  };
  const found = operationIn(base) ?? operationIn(head);
  if (!found) return {};
  const operationId = typeof found.operation.operationId === 'string' ? found.operation.operationId : `${method.toUpperCase()} ${route}`;
  let parameter: Parameter | undefined;
  if (rest[0] === 'parameters' && rest[1] !== undefined) {
    // Optic names a parameter by its index in the operation (the base's when removed), constraints.ts by `in:name`.
    const key = rest[1];
    const [fromBase, fromHead] = [operationIn(base), operationIn(head)];
    const listOf = (at: typeof found | undefined): Parameter[] => [
      ...((at?.item.parameters as Parameter[] | undefined) ?? []),
      ...((at?.operation.parameters as Parameter[] | undefined) ?? []),
    ];
    const indexed = (at: typeof found | undefined) =>
      /^\d+$/.test(key) ? (at?.operation.parameters as Parameter[] | undefined)?.[Number(key)] : undefined;
    const [first, second] = change.removal ? [fromBase, fromHead] : [fromHead, fromBase];
    parameter = indexed(first) ?? indexed(second) ?? [...listOf(fromBase), ...listOf(fromHead)].find((p) => `${p.in}:${p.name}` === key);
  }
  // The deprecation nearest the change, from the node itself up to its operation.
  let deprecation: Deprecation | undefined;
  if (parameter?.deprecated === true)
    deprecation = { at: `${change.path}`, ...(isDay(parameter['x-sunset']) ? { sunset: parameter['x-sunset'] } : {}) };
  for (let depth = tokens.length; depth >= 3 && !deprecation; depth -= 1) {
    const node = tokens
      .slice(0, depth)
      .reduce<unknown>((at, key) => (isObject(at) ? at[key] : Array.isArray(at) ? at[Number(key)] : undefined), base);
    if (isObject(node) && node.deprecated === true) {
      deprecation = { at: `/${tokens.slice(0, depth).join('/')}`, ...(isDay(node['x-sunset']) ? { sunset: node['x-sunset'] } : {}) };
    }
  }
  // A parameter removed or narrowed breaks who sends it; one made required breaks who does not (the operation's users).
  const scoped = parameter?.name !== undefined && (change.removal === true || change.message.startsWith('request '));
  return {
    ...(deprecation ? { deprecation } : {}),
    operation: { operationId, ...(scoped ? { parameter: parameter?.name } : {}) },
  };
}

/** A GraphQL change's deprecation and the coordinates whose users it breaks (by its path: `Type.field[.arg]`). */
function graphqlSubject(change: Change, schema: GraphQLSchema): Subject {
  const [typeName = '', member, argument] = (change.path ?? '').split('.').filter((token) => !token.startsWith('@'));
  const type = schema.getType(typeName);
  if (!type) return {};
  const withSunset = (at: string, reason: string | null | undefined): Deprecation | undefined =>
    reason ? { at, ...(REASON_SUNSET.exec(reason)?.[1] ? { sunset: REASON_SUNSET.exec(reason)?.[1] } : {}) } : undefined;
  if ((isObjectType(type) || isInterfaceType(type)) && member !== undefined) {
    const field = type.getFields()[member];
    const arg = argument === undefined ? undefined : field?.args.find((a) => a.name === argument);
    const deprecation = withSunset(change.path ?? '', arg ? arg.deprecationReason : field?.deprecationReason);
    // The field as its own type declares it, and as its interfaces or implementations do (usage may name either).
    const owners = [type.name, ...(isObjectType(type) ? type.getInterfaces().map((i) => i.name) : schema.getPossibleTypes(type).map((t) => t.name))];
    const coordinates = owners.flatMap((owner) => [`${owner}.${member}`, ...(argument ? [`${owner}.${member}(${argument}:)`] : [])]);
    return { ...(deprecation ? { deprecation } : {}), coordinates: argument ? coordinates.filter((c) => c.includes('(')) : coordinates };
  }
  let deprecation: Deprecation | undefined;
  if (isEnumType(type) && member !== undefined) deprecation = withSunset(change.path ?? '', type.getValue(member)?.deprecationReason);
  if (isInputObjectType(type) && member !== undefined) deprecation = withSunset(change.path ?? '', type.getFields()[member]?.deprecationReason);
  const coordinates = referencingCoordinates(schema, typeName);
  return { ...(deprecation ? { deprecation } : {}), ...(coordinates.length > 0 ? { coordinates } : {}) };
}

/** The fields that answer a type or take it in an argument (through input objects, at any depth), as coordinates. */
function referencingCoordinates(schema: GraphQLSchema, typeName: string): string[] {
  const reaches = new Map<string, boolean>();
  const inputReaches = (name: string): boolean => {
    if (name === typeName) return true;
    if (reaches.has(name)) return reaches.get(name) as boolean;
    reaches.set(name, false);
    const type = schema.getType(name);
    const result = isInputObjectType(type) && Object.values(type.getFields()).some((field) => inputReaches(getNamedType(field.type).name));
    reaches.set(name, result);
    return result;
  };
  const answers = (name: string) => {
    const type = schema.getType(name);
    return name === typeName || (isUnionType(type) && type.getTypes().some((member) => member.name === typeName));
  };
  const coordinates: string[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__') || (!isObjectType(type) && !isInterfaceType(type))) continue;
    for (const field of Object.values(type.getFields())) {
      if (answers(getNamedType(field.type).name) || field.args.some((arg) => inputReaches(getNamedType(arg.type).name))) {
        coordinates.push(`${type.name}.${field.name}`);
      }
    }
  }
  return coordinates;
}

// ---- Usage ---------------------------------------------------------------------------------------------------------

interface Seen {
  requests?: number;
  lastSeen?: string;
  operations?: string[];
}

/** The usage file (format `users-posts-usage/1`, written by `pnpm contracts:usage export`). */
export interface UsageFile {
  format: string;
  exportedAt?: string;
  windowDays?: number;
  rest?: Record<string, { clients?: Record<string, Seen>; parameters?: Record<string, Record<string, Seen>> }>;
  graphql?: Record<string, { clients?: Record<string, Seen> }>;
}

export const USAGE_FORMAT = 'users-posts-usage/1';

/** Parses and checks a usage file; throws with the reason when it is not one. */
export function parseUsage(text: string, file: string): UsageFile {
  const usage: unknown = JSON.parse(text);
  if (!isObject(usage) || usage.format !== USAGE_FORMAT) throw new Error(`${file} is not a usage file (expected "format": "${USAGE_FORMAT}")`);
  return usage as unknown as UsageFile;
}

/** Which operations of the trusted documents (client "trusted-documents") touch each coordinate of the base schema. */
export function manifestCoordinates(manifest: Record<string, string>, schema: GraphQLSchema): Map<string, Set<string>> {
  const used = new Map<string, Set<string>>();
  const add = (coordinate: string, operation: string) => used.set(coordinate, (used.get(coordinate) ?? new Set()).add(operation));
  for (const document of Object.values(manifest)) {
    let ast;
    try {
      ast = parse(document);
    } catch {
      continue;
    }
    const operations = ast.definitions.flatMap((d) => (d.kind === Kind.OPERATION_DEFINITION ? [d.name?.value ?? 'anonymous-operation'] : []));
    const typeInfo = new TypeInfo(schema);
    visit(
      ast,
      visitWithTypeInfo(typeInfo, {
        Field(node) {
          const parent = typeInfo.getParentType();
          if (!parent) return;
          for (const operation of operations) {
            add(`${parent.name}.${node.name.value}`, operation);
            for (const argument of node.arguments ?? []) add(`${parent.name}.${node.name.value}(${argument.name.value}:)`, operation);
          }
        },
      }),
    );
  }
  return used;
}

interface User {
  client: string;
  operations: string[];
  lastSeen?: string;
}

// ---- Approvals -----------------------------------------------------------------------------------------------------

export interface Approval {
  change: string;
  reason: string;
  owner: string;
  expires: string;
}

export const APPROVALS_PATH = 'contracts/approvals.yaml';

/** contracts/approvals.yaml's entries, and what is wrong with the file (each entry needs all four fields). */
export function parseApprovals(text: string | undefined): { approvals: Approval[]; problems: string[] } {
  if (text === undefined) return { approvals: [], problems: [] };
  const list: unknown = parseYaml(text) ?? [];
  if (!Array.isArray(list)) return { approvals: [], problems: [`${APPROVALS_PATH} must be a list of {change, reason, owner, expires}`] };
  const approvals: Approval[] = [];
  const problems: string[] = [];
  list.forEach((entry: unknown, index) => {
    const missing = ['change', 'reason', 'owner', 'expires'].filter((key) => !isObject(entry) || typeof entry[key] !== 'string' || entry[key] === '');
    if (missing.length > 0) problems.push(`${APPROVALS_PATH} entry ${index + 1}: needs ${missing.join(', ')} (strings)`);
    else if (!isDay((entry as Record<string, unknown>).expires))
      problems.push(`${APPROVALS_PATH} entry ${index + 1}: expires must be a date YYYY-MM-DD`);
    else approvals.push(entry as unknown as Approval);
  });
  return { approvals, problems };
}

// ---- The verdict ---------------------------------------------------------------------------------------------------

export interface EvolutionInput {
  changes: Change[];
  base: { openapi?: string; graphql?: string };
  head: { openapi?: string; graphql?: string };
  /** The usage file, when there is one (without it, every breaking change fails as before). */
  usage?: UsageFile;
  /** The trusted-documents manifest: `{ hash: document }`. */
  manifest?: Record<string, string>;
  approvals: Approval[];
  windowDays: number;
  today?: string;
}

export interface Verdict {
  /** Breaking changes and approvals that fail the gate, each a printable block. */
  failures: string[];
  /** Breaking changes that pass (unused within the window, or approved), each a printable block. */
  passed: string[];
}

const DAY_MS = 86_400_000;

/** Judges each breaking change: removal rules, then usage, then approvals; and each approval. */
export function judge(input: EvolutionInput): Verdict {
  const today = input.today ?? utcDay();
  const since = utcDay(new Date(Date.parse(`${today}T00:00:00Z`) - input.windowDays * DAY_MS));
  // Read only for the contracts that have changes to judge (inlining openapi.yaml twice costs a second).
  const once = <T>(make: () => T) => {
    let value: { made: T } | undefined;
    return () => (value ??= { made: make() }).made;
  };
  const baseOpenapi = once(() => (input.base.openapi === undefined ? undefined : loadOpenapi(input.base.openapi)));
  const headOpenapi = once(() => (input.head.openapi === undefined ? undefined : loadOpenapi(input.head.openapi)));
  const baseSchema = once(() => (input.base.graphql === undefined ? undefined : buildSchema(input.base.graphql)));
  const trusted = once(() => {
    const schema = baseSchema();
    return input.manifest && schema ? manifestCoordinates(input.manifest, schema) : new Map<string, Set<string>>();
  });
  const recent = (seen: Record<string, Seen> | undefined): User[] =>
    Object.entries(seen ?? {})
      .filter(([, entry]) => entry.lastSeen === undefined || entry.lastSeen >= since)
      .map(([client, entry]) => ({ client, operations: entry.operations ?? [], ...(entry.lastSeen ? { lastSeen: entry.lastSeen } : {}) }));

  /** Who used what the change touches, or undefined when nothing can tell (no usage file, or a change not placed). */
  const usersOf = (subject: Subject): User[] | undefined => {
    if (subject.operation) {
      if (!input.usage) return undefined;
      const entry = input.usage.rest?.[subject.operation.operationId];
      const seen = subject.operation.parameter === undefined ? entry?.clients : entry?.parameters?.[subject.operation.parameter];
      return recent(seen).map((user) => ({ ...user, operations: [subject.operation?.operationId ?? ''] }));
    }
    if (!subject.coordinates) return undefined;
    const users = new Map<string, User>();
    for (const coordinate of subject.coordinates) {
      for (const user of recent(input.usage?.graphql?.[coordinate]?.clients)) {
        const known = users.get(user.client);
        users.set(user.client, { ...user, operations: [...new Set([...(known?.operations ?? []), ...user.operations])] });
      }
      const operations = trusted().get(coordinate);
      if (operations) {
        const known = users.get('trusted-documents');
        users.set('trusted-documents', { client: 'trusted-documents', operations: [...new Set([...(known?.operations ?? []), ...operations])] });
      }
    }
    // The manifest alone names users, but cannot tell that nobody else uses the field.
    return input.usage || users.size > 0 ? [...users.values()] : undefined;
  };

  const approvalsFor = new Map<string, Approval[]>();
  for (const approval of input.approvals) approvalsFor.set(approval.change, [...(approvalsFor.get(approval.change) ?? []), approval]);
  const usedApprovals = new Set<Approval>();
  const failures: string[] = [];
  const passed: string[] = [];
  const ids = new Set(input.changes.map(changeId));

  for (const change of input.changes) {
    const id = changeId(change);
    const schema = change.contract === 'graphql' ? baseSchema() : undefined;
    const subject =
      change.contract === 'openapi' ? openapiSubject(change, baseOpenapi(), headOpenapi()) : schema ? graphqlSubject(change, schema) : {};
    const reasons: string[] = [];
    let warning: string | undefined;
    const sunset = subject.deprecation?.sunset;
    if (change.removal && !subject.deprecation)
      reasons.push('removed without being deprecated first (deprecate it with a sunset date, wait for the date)');
    else if (change.removal && (sunset === undefined || sunset > today))
      reasons.push(sunset ? `removed before its sunset date ${sunset}` : 'removed, but its deprecation has no sunset date');
    else {
      const users = usersOf(subject);
      if (users === undefined)
        reasons.push(input.usage ? 'breaking, and no usage tells who uses it' : 'breaking (no usage file to tell who uses it)');
      else if (users.length > 0) {
        const named = users.map((user) => `${user.client}${user.operations.length ? ` (${user.operations.join(', ')})` : ''}`).join('; ');
        reasons.push(`breaking for clients that used it within ${input.windowDays} days: ${named}`);
      } else warning = `breaking, but no client used it within ${input.windowDays} days${sunset ? ` (sunset ${sunset} passed)` : ''}`;
    }
    const headline = `[${change.contract}] ${change.message}${change.path ? ` (${change.path})` : ''}`;
    if (reasons.length === 0) {
      passed.push(`⚠ ${headline}\n  ${warning}\n  id: ${id}`);
      continue;
    }
    const approval = (approvalsFor.get(id) ?? []).find((entry) => entry.expires >= today);
    if (approval) {
      usedApprovals.add(approval);
      passed.push(
        `⚠ ${headline}\n  ${reasons.join('; ')}\n  approved by ${approval.owner} until ${approval.expires}: ${approval.reason}\n  id: ${id}`,
      );
      continue;
    }
    failures.push(`${headline}\n  ${reasons.join('; ')}\n  id: ${id} (to let it through: an entry of ${APPROVALS_PATH})`);
  }

  for (const approval of input.approvals) {
    if (usedApprovals.has(approval)) continue;
    const why = !ids.has(approval.change)
      ? 'unknown: it names no breaking change of this diff (remove it, or copy the id the gate prints)'
      : approval.expires < today
        ? `expired on ${approval.expires}`
        : 'unused: the change passes without it (remove it)';
    failures.push(`approval for ${approval.change} (${approval.owner}) ${why}`);
  }
  return { failures, passed };
}

/**
 * The gate's breaking-change step: both contracts of the working tree against `baseRev`, judged with the usage file at
 * `usagePath` (when it exists), the trusted-documents manifest and contracts/approvals.yaml of `repoRoot`.
 */
export async function checkEvolution(
  repoRoot: string,
  baseRev: string | undefined,
  options: { usagePath: string; windowDays: number; today?: string },
): Promise<Verdict & { notes: string[] }> {
  const approvalsFile = parseApprovals(await readFile(path.join(repoRoot, APPROVALS_PATH), 'utf8').catch(() => undefined));
  const usageName = path.relative(repoRoot, options.usagePath) || options.usagePath;
  const usageText = await readFile(options.usagePath, 'utf8').catch(() => undefined);
  const manifestText = await readFile(path.join(repoRoot, MANIFEST_PATH), 'utf8').catch(() => undefined);
  const notes = [
    `usage: ${usageText === undefined ? `none (${usageName} absent)` : usageName}, window ${options.windowDays} days; trusted documents: ${manifestText === undefined ? 'none' : MANIFEST_PATH}`,
  ];
  const result = baseRev ? await checkBreakingAgainst(baseRev, repoRoot) : { changes: [], skipped: 'no base revision' };
  if (result.skipped) notes.push(`skipped: ${result.skipped}`);
  const contractsAt = async (rev: string | undefined) => {
    const [openapi, graphql] = await Promise.all([contractAt(repoRoot, rev, OPENAPI_CONTRACT), contractAt(repoRoot, rev, GRAPHQL_CONTRACT)]);
    return { ...(openapi === undefined ? {} : { openapi }), ...(graphql === undefined ? {} : { graphql }) };
  };
  const verdict = judge({
    changes: result.changes,
    base: baseRev ? await contractsAt(baseRev) : {},
    head: await contractsAt(undefined),
    ...(usageText === undefined ? {} : { usage: parseUsage(usageText, usageName) }),
    ...(manifestText === undefined ? {} : { manifest: JSON.parse(manifestText) as Record<string, string> }),
    approvals: approvalsFile.approvals,
    windowDays: options.windowDays,
    ...(options.today ? { today: options.today } : {}),
  });
  return { ...verdict, failures: [...approvalsFile.problems, ...verdict.failures], notes };
}
