// Access decisions in the breaking-change gate (breaking.ts): who may call an operation (GraphQL @auth/@public, OpenAPI
// `security` and `x-required-role`) and who may see a field (GraphQL @private, OpenAPI `x-private`).
//
// Asking more of a caller (credentials where none were needed, a role where none or a lower one was) refuses requests
// that used to succeed; showing a field to fewer callers takes from answers a client relied on. Both are breaking. The
// reverse (an operation opened, a role lowered, a field made public) is not. Neither @graphql-inspector nor Optic
// rates these right: inspector reports an added `@auth` or `@private` on an existing field as DANGEROUS, and reads
// `@auth` → `@auth(requires: USER)` (no change: USER is the default) as an argument added; Optic's
// BreakingChangesRuleset does not look at `security` at all.
import { Kind, parse, type ConstDirectiveNode, type DocumentNode } from 'graphql';

export interface AccessChange {
  message: string;
  /** GraphQL: `Type.field`; OpenAPI: a JSON pointer into the head document. */
  path: string;
}

type Role = string;
/** The same order as the server's (apps/api/src/auth/principal.ts): ADMIN satisfies USER. */
const ROLE_RANK: Record<string, number> = { USER: 1, ADMIN: 2 };
/** A role the server does not know is ranked above every known one: it lets nobody in that was let in before. */
const rankOf = (role: Role) => ROLE_RANK[role] ?? Object.keys(ROLE_RANK).length + 1;

/** What a caller must bring: nothing, credentials, or credentials holding at least `role`. */
interface Requirement {
  authenticated: boolean;
  role: Role | undefined;
}

const describe = ({ authenticated, role }: Requirement) => (role ? `the ${role} role` : authenticated ? 'authentication' : 'no credentials');
const level = ({ authenticated, role }: Requirement) => (role ? rankOf(role) : authenticated ? 1 : 0);

// ---- GraphQL ----

const directive = (directives: readonly ConstDirectiveNode[] | undefined, name: string) => directives?.find((d) => d.name.value === name);

/** The `requires` default of `directive @auth(requires: Role = USER)` in this SDL (USER when it declares none). */
function defaultRole(document: DocumentNode): Role {
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.DIRECTIVE_DEFINITION || definition.name.value !== 'auth') continue;
    const value = definition.arguments?.find((argument) => argument.name.value === 'requires')?.defaultValue;
    if (value?.kind === Kind.ENUM) return value.value;
  }
  return 'USER';
}

/**
 * `Type.field` → what calling it requires, for every field of every object type (and extension): `@public` opens it,
 * its own `@auth` or else its type's decides (as auth-decisions.ts and the server's @auth directive read them), and a
 * field with neither requires nothing beyond what reaching its parent did.
 */
export function graphqlRequirements(sdl: string): Map<string, Requirement> {
  const document = parse(sdl);
  const fallbackRole = defaultRole(document);
  const requirements = new Map<string, Requirement>();
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION && definition.kind !== Kind.OBJECT_TYPE_EXTENSION) continue;
    const typeAuth = directive(definition.directives, 'auth');
    for (const field of definition.fields ?? []) {
      const auth = directive(field.directives, 'public') ? undefined : (directive(field.directives, 'auth') ?? typeAuth);
      const requires = auth?.arguments?.find((argument) => argument.name.value === 'requires')?.value;
      const role = auth ? (requires?.kind === Kind.ENUM ? requires.value : fallbackRole) : undefined;
      // USER is what every authenticated caller holds: `@auth` alone and `@auth(requires: USER)` are the same decision.
      requirements.set(`${definition.name.value}.${field.name.value}`, {
        authenticated: auth !== undefined,
        role: role === 'USER' ? undefined : role,
      });
    }
  }
  return requirements;
}

/** GraphQL fields present in both schemas whose callers must now bring more. */
export function graphqlAccessChanges(baseSdl: string, headSdl: string): AccessChange[] {
  const base = graphqlRequirements(baseSdl);
  const changes: AccessChange[] = [];
  for (const [field, head] of graphqlRequirements(headSdl)) {
    const before = base.get(field);
    if (before && level(head) > level(before))
      changes.push({ path: field, message: `Field '${field}' now requires ${describe(head)} (it required ${describe(before)})` });
  }
  return changes;
}

// ---- OpenAPI ----

type Node = Record<string, unknown>;
type SecurityRequirement = Record<string, string[]>;
type Doc = { security?: SecurityRequirement[]; paths?: Record<string, Record<string, unknown>> };

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);
const pointer = (...tokens: string[]) => tokens.map((token) => `/${token.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

/**
 * An operation's requirement, read as the server reads it (apps/api/src/rest/requirements.ts, not imported: scripts
 * judge the server, they do not share its code): its `security`, or else the document's, with `[]` or an empty
 * alternative `{}` meaning anonymous callers are allowed; and its `x-required-role`.
 */
function operationRequirement(document: Doc, operation: Node): Requirement {
  const security = (operation.security as SecurityRequirement[] | undefined) ?? document.security ?? [];
  const authenticated = security.length > 0 && security.every((alternative) => Object.keys(alternative).length > 0);
  const role = typeof operation['x-required-role'] === 'string' ? operation['x-required-role'] : undefined;
  return { authenticated, role };
}

/** Operations present in both documents that now ask more of their callers: credentials, or a new or higher role. */
function operationAccessChanges(base: Doc, head: Doc): AccessChange[] {
  const changes: AccessChange[] = [];
  for (const [route, headItem] of Object.entries(head.paths ?? {})) {
    for (const method of METHODS) {
      const [before, after] = [base.paths?.[route]?.[method], headItem[method]];
      if (!isNode(before) || !isNode(after)) continue;
      const [from, to] = [operationRequirement(base, before), operationRequirement(head, after)];
      const where = `${method.toUpperCase()} ${route}`;
      if (to.authenticated && !from.authenticated && !to.role)
        changes.push({ path: pointer('paths', route, method, 'security'), message: `${where}: was public and now requires credentials (security)` });
      if (to.role && (!from.role || rankOf(to.role) > rankOf(from.role))) {
        const how = from.role ? `raised from ${from.role}` : `added${from.authenticated ? '' : ' to a public operation'}`;
        changes.push({
          path: pointer('paths', route, method, 'x-required-role'),
          message: `${where}: now requires the ${to.role} role (x-required-role ${how})`,
        });
      }
    }
  }
  return changes;
}

const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'] as const;

/** Properties of `head` that are `x-private` where the same property of `base` was not, at any depth. */
function comparePrivacy(base: Node, head: Node, at: string, where: string, out: AccessChange[], depth = 0): void {
  // Behind a $ref cycle (breaking.ts inlines each cycle once) or implausibly deep: compared at its first expansion.
  if (depth > 32 || typeof base.$ref === 'string' || typeof head.$ref === 'string') return;
  if (isNode(base.properties) && isNode(head.properties)) {
    for (const [name, property] of Object.entries(head.properties)) {
      const before = base.properties[name];
      if (!isNode(before) || !isNode(property)) continue;
      const here = `${at}${pointer('properties', name)}`;
      if (property['x-private'] === true && before['x-private'] !== true)
        out.push({ path: here, message: `${where}: response property '${name}' was made private (x-private): fewer callers see its value` });
      comparePrivacy(before, property, here, where, out, depth + 1);
    }
  }
  for (const keyword of ['items', 'additionalProperties', 'not'] as const) {
    const [before, after] = [base[keyword], head[keyword]];
    if (isNode(before) && isNode(after)) comparePrivacy(before, after, `${at}/${keyword}`, where, out, depth + 1);
  }
  for (const keyword of SUBSCHEMA_LISTS) {
    const [before, after] = [base[keyword], head[keyword]];
    if (!Array.isArray(before) || !Array.isArray(after)) continue;
    after.forEach((schema: unknown, index) => {
      const previous: unknown = before[index];
      if (isNode(previous) && isNode(schema)) comparePrivacy(previous, schema, `${at}/${keyword}/${index}`, where, out, depth + 1);
    });
  }
}

/**
 * Response properties made `x-private`, per operation present in both (inlined) documents, wherever the schema is
 * answered. Responses only: privacy limits what a caller reads; a request property is the caller's own value.
 */
function privacyChanges(base: Doc, head: Doc): AccessChange[] {
  const changes: AccessChange[] = [];
  type Content = Record<string, { schema?: unknown }>;
  for (const [route, headItem] of Object.entries(head.paths ?? {})) {
    for (const method of METHODS) {
      const [before, after] = [base.paths?.[route]?.[method], headItem[method]];
      if (!isNode(before) || !isNode(after) || !isNode(after.responses)) continue;
      const baseResponses = isNode(before.responses) ? before.responses : {};
      for (const [status, response] of Object.entries(after.responses)) {
        const baseResponse = baseResponses[status];
        if (!isNode(response) || !isNode(baseResponse)) continue;
        for (const [mediaType, media] of Object.entries((response.content as Content | undefined) ?? {})) {
          const previous = (baseResponse.content as Content | undefined)?.[mediaType]?.schema;
          if (isNode(previous) && isNode(media.schema)) {
            const at = pointer('paths', route, method, 'responses', status, 'content', mediaType, 'schema');
            comparePrivacy(previous, media.schema, at, `${method.toUpperCase()} ${route}`, changes);
          }
        }
      }
    }
  }
  return changes;
}

/** Access and privacy changes between two inlined OpenAPI documents (breaking.ts loads them). */
export function openapiAccessChanges(base: Doc, head: Doc): AccessChange[] {
  return [...operationAccessChanges(base, head), ...privacyChanges(base, head)];
}
