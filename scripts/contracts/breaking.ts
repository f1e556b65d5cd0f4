// Breaking changes in both contracts against a base git revision (GraphQL: @graphql-inspector/core; OpenAPI: Optic, and
// constraints.ts for the request tightenings and response loosenings Optic lets through; on both, access.ts for the
// access decisions and field privacy neither rates as breaking).
// Optic's BreakingChangesRuleset (@useoptic/*, maintained) reads OpenAPI 3.1 natively, type arrays included. Rejected:
// Atlassian openapi-diff 0.24.1 throws "Unsupported OpenAPI version: 3.1.0" (swagger-parser 10) and, after a 3.0
// down-conversion, misses nullability changes; @pb33f/openapi-changes downloads its binary at postinstall.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ChangeType, CriticalityLevel, diff as diffGraphql } from '@graphql-inspector/core';
import { diff as diffOpenapi, Severity } from '@useoptic/openapi-utilities';
import { RuleRunner } from '@useoptic/rulesets-base';
import { BreakingChangesRuleset } from '@useoptic/standard-rulesets';
import { buildSchema, getNamedType, isEnumType, isInterfaceType, isObjectType, type GraphQLSchema } from 'graphql';
import { parseYaml } from './yaml.js';
import { graphqlAccessChanges, openapiAccessChanges } from './access.js';
import { constraintChanges } from './constraints.js';
import { resolveRev, revExists, showFile } from './git.js';

export interface Change {
  contract: 'graphql' | 'openapi';
  message: string;
  path?: string;
  /** Something the base had is gone (an operation, parameter, property, field, argument, type or value): allowed
   * only after its sunset date (evolution.ts). */
  removal?: boolean;
}

/** The id the gate prints for a change and contracts/approvals.yaml names: the contract and where. */
export const changeId = (change: Change): string => `${change.contract}:${change.path ?? change.message}`;

export const GRAPHQL_CONTRACT = 'schema/schema.graphql';
export const OPENAPI_CONTRACT = 'openapi/openapi.yaml';

/** Enum types that appear in answers (a field's type, at any depth of lists and non-null), by name. */
function outputEnums(schema: GraphQLSchema): Set<string> {
  const names = new Set<string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) && !isInterfaceType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      const named = getNamedType(field.type);
      if (isEnumType(named)) names.add(named.name);
    }
  }
  return names;
}

/** What GraphQL can deprecate, removed (a type cannot be deprecated: its fields are, and go first). */
const REMOVALS = new Set<string>([
  ChangeType.FieldRemoved,
  ChangeType.FieldArgumentRemoved,
  ChangeType.InputFieldRemoved,
  ChangeType.EnumValueRemoved,
]);

/**
 * BREAKING changes between two GraphQL SDL documents, plus those that graphql-inspector calls DANGEROUS and a consumer
 * meets as broken: an argument's or input field's default changed (a request that omitted it now means something
 * else), a value added to an enum that appears in answers (a client switching over the values meets one it does
 * not know; the same rule as constraints.ts for OpenAPI), and `@private` added to an existing field (its value is
 * now hidden from most callers). Fields that now require more of their callers (`@auth`, `@public`) come from
 * access.ts, which reads the decisions rather than the directives' shapes.
 */
export async function graphqlBreakingChanges(baseSdl: string, headSdl: string): Promise<Change[]> {
  const head = buildSchema(headSdl);
  const answered = outputEnums(head);
  const changes = await diffGraphql(buildSchema(baseSdl), head);
  const madePrivate = (c: (typeof changes)[number]) =>
    c.type === ChangeType.DirectiveUsageFieldDefinitionAdded &&
    (c.meta as { addedDirectiveName: string }).addedDirectiveName === 'private' &&
    // inspector marks a directive on a new field (or type) this way: nobody could read it before, so nobody loses it.
    !(c.meta as { addedToNewType: boolean }).addedToNewType;
  const breaks = (c: (typeof changes)[number]) =>
    c.criticality.level === CriticalityLevel.Breaking ||
    c.type === ChangeType.FieldArgumentDefaultChanged ||
    c.type === ChangeType.InputFieldDefaultValueChanged ||
    (c.type === ChangeType.EnumValueAdded && answered.has(c.path?.split('.')[0] ?? '')) ||
    madePrivate(c);
  const message = (c: (typeof changes)[number]) =>
    madePrivate(c) ? `Field '${c.path?.replace(/\.@private$/, '')}' was made private (@private): fewer callers see its value` : c.message;
  const inspected = changes.filter(breaks).map((c): Change => ({
    contract: 'graphql',
    message: message(c),
    ...(c.path ? { path: c.path } : {}),
    ...(REMOVALS.has(c.type) ? { removal: true } : {}),
  }));
  const access = graphqlAccessChanges(baseSdl, headSdl).map((change): Change => ({ contract: 'graphql', ...change }));
  return [...inspected, ...access];
}

/** Breaking changes between two OpenAPI 3.x YAML (or JSON) documents; `path` is a JSON pointer. */
export async function openapiBreakingChanges(baseDoc: string, headDoc: string): Promise<Change[]> {
  const from = loadOpenapi(baseDoc);
  const to = loadOpenapi(headDoc);
  const runner = new RuleRunner([new BreakingChangesRuleset()]);
  const [changedFrom, changedTo] = changedPathsOnly(from, to);
  const results = await runner.runRules({ context: {}, diffs: diffOpenapi(changedFrom, changedTo), fromSpec: changedFrom, toSpec: changedTo });
  const breaking = results.filter((r) => !r.passed && !r.exempted && r.severity === Severity.Error);
  // A removed operation also fails a rule for each of its responses and properties: keep the outermost.
  const paths = breaking.map((r) => r.location.jsonPath);
  const optic = breaking
    .filter((r) => !paths.some((p) => r.location.jsonPath.startsWith(`${p}/`)))
    .map((r): Change => {
      const message = `${r.where}: ${r.error ?? r.name}`;
      return {
        contract: 'openapi',
        message,
        path: r.location.jsonPath,
        ...(/cannot remove (?:an operation|response property)/.test(message) ? { removal: true } : {}),
      };
    });
  // What Optic already reported at a path, at one inside it, or around it, is not reported twice.
  const related = (path: string) => paths.some((p) => p === path || p.startsWith(`${path}/`) || path.startsWith(`${p}/`));
  const constraints = constraintChanges(from as never, to as never)
    .filter((change) => !related(change.path))
    .map((change): Change => ({ contract: 'openapi', message: change.message, path: change.path }));
  // Not filtered by what Optic reported nearby: who may call an operation or see a field is another finding.
  const access = openapiAccessChanges(from as never, to as never).map((change): Change => ({ contract: 'openapi', ...change }));
  return [...optic, ...constraints, ...access];
}

type OpenapiDoc = Parameters<RuleRunner['runRules']>[0]['fromSpec'];

/**
 * The two documents without the path items that are the same in both (inlined, so a change to a shared schema shows
 * in every path that uses it). Optic's rules are each about one operation, and its runner visits every node of both
 * documents whether or not it changed: 9.6 s for our contract against itself, most of `pnpm contracts:check`. A
 * removed or added path stays in (it differs from nothing). Constraints and access are still compared whole.
 */
function changedPathsOnly(from: OpenapiDoc, to: OpenapiDoc): [OpenapiDoc, OpenapiDoc] {
  const [fromPaths, toPaths] = [(from.paths ?? {}) as Record<string, unknown>, (to.paths ?? {}) as Record<string, unknown>];
  const same = new Set(
    Object.keys(toPaths).filter((route) => route in fromPaths && JSON.stringify(fromPaths[route]) === JSON.stringify(toPaths[route])),
  );
  const without = (paths: Record<string, unknown>) => Object.fromEntries(Object.entries(paths).filter(([route]) => !same.has(route)));
  return [{ ...from, paths: without(fromPaths) } as OpenapiDoc, { ...to, paths: without(toPaths) } as OpenapiDoc];
}

// Optic compares inlined documents. Local `$ref`s are inlined here, each cycle once (a ref already being
// expanded stays a `$ref`): json-schema-ref-parser's `circular: 'ignore'` would leave a whole cyclic
// schema un-inlined (so its changes unseen), and real JS cycles make Optic's traversal loop forever.
export function loadOpenapi(source: string): OpenapiDoc {
  const doc: unknown = parseYaml(source);
  return inlineRefs(doc, doc, []) as OpenapiDoc;
}

function inlineRefs(node: unknown, root: unknown, expanding: string[]): unknown {
  if (Array.isArray(node)) return node.map((item) => inlineRefs(item, root, expanding));
  if (typeof node !== 'object' || node === null) return node;
  const { $ref, ...siblings } = node as Record<string, unknown>;
  if (typeof $ref === 'string' && $ref.startsWith('#/') && !expanding.includes($ref)) {
    const target = resolvePointer(root, $ref);
    if (target !== undefined) {
      // OpenAPI 3.1 lets `summary`/`description` sit beside a `$ref` and override the target's.
      return { ...(inlineRefs(target, root, [...expanding, $ref]) as object), ...(inlineRefs(siblings, root, expanding) as object) };
    }
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inlineRefs(value, root, expanding)]));
}

function resolvePointer(root: unknown, ref: string): unknown {
  return ref
    .slice(2)
    .split('/')
    .map((token) => decodeURIComponent(token).replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>((node, key) => (typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined), root);
}

/** `CONTRACTS_BASE` if set, else `origin/main`, else `HEAD~1`, whichever exists first; undefined if none. */
export async function defaultBaseRev(repoRoot: string): Promise<string | undefined> {
  if (process.env.CONTRACTS_BASE) return process.env.CONTRACTS_BASE;
  // In a fresh clone of main, origin/main is HEAD itself and would compare nothing: fall back to HEAD~1.
  const head = await resolveRev(repoRoot, 'HEAD');
  const upstream = await resolveRev(repoRoot, 'origin/main');
  if (upstream && upstream !== head) return 'origin/main';
  return (await revExists(repoRoot, 'HEAD~1')) ? 'HEAD~1' : undefined;
}

const CONTRACTS = [
  { file: GRAPHQL_CONTRACT, compare: graphqlBreakingChanges },
  { file: OPENAPI_CONTRACT, compare: openapiBreakingChanges },
];

/** A contract file at a revision (`git show`), or in the working tree when `rev` is undefined. */
export const contractAt = (repoRoot: string, rev: string | undefined, file: string) =>
  rev === undefined ? readFile(path.join(repoRoot, file), 'utf8').catch(() => undefined) : showFile(repoRoot, rev, file);

/**
 * Compares both contracts at `baseRev` (via `git show`) with the working-tree files. A contract that is
 * missing at `baseRev` or in the working tree is not compared and its reason is put in `skipped`; a
 * revision that does not exist skips everything.
 */
export async function checkBreakingAgainst(
  baseRev: string,
  repoRoot: string,
  headRev?: string,
): Promise<{ baseRev: string; changes: Change[]; skipped?: string }> {
  if (!(await revExists(repoRoot, baseRev))) {
    return { baseRev, changes: [], skipped: `base revision ${baseRev} does not exist` };
  }
  const changes: Change[] = [];
  const skipped: string[] = [];
  for (const { file, compare } of CONTRACTS) {
    const base = await contractAt(repoRoot, baseRev, file);
    const head = await contractAt(repoRoot, headRev, file);
    if (base === undefined) skipped.push(`${file} did not exist at ${baseRev}`);
    else if (head === undefined) skipped.push(`${file} is missing from ${headRev ?? 'the working tree'}`);
    else changes.push(...(await compare(base, head)));
  }
  return { baseRev, changes, ...(skipped.length ? { skipped: skipped.join('; ') } : {}) };
}
