// Usage of the contracts recorded by the running server (SPEC §6): requests per REST operation and query parameter, per
// GraphQL schema coordinate and operation, per client, counted in memory and added to `contract_usage` every few seconds.
import { Prisma, type PrismaClient } from '@users-posts/db';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import {
  getOperationAST,
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type ASTNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Principal } from '../auth/principal.js';
import { loadOpenapi } from '../contract/openapi-contract.js';

declare module 'fastify' {
  interface FastifyInstance {
    contractUsage: ContractUsage;
  }
}

export interface ContractUsage {
  /** The GraphQL door's envelop plugin (graphql/plugin.ts): counts every executed or subscribed operation. */
  graphqlPlugin: Plugin;
  /** Adds the counts so far to the database now (also every flush interval and at close). */
  flush(): Promise<void>;
}

/** `kind` of the rows (prisma/schema.prisma `ContractUsage`). */
export const USAGE_KIND = { rest: 'rest', restParameter: 'rest-parameter', graphql: 'graphql' } as const;
/** The operation name recorded for an unnamed GraphQL operation. */
export const ANONYMOUS_OPERATION = 'anonymous-operation';
/** SPEC §6: a client's `X-Client-Name`, when well-formed; anything else is ignored. */
export const CLIENT_NAME = /^[A-Za-z0-9._-]{1,64}$/;
/**
 * Distinct client names one instance keeps between two flushes: `X-Client-Name` is the caller's to choose, and each new
 * name is a row of the table; names beyond it are counted as `anonymous` until the next flush.
 */
const MAX_CLIENTS = 1000;
/**
 * The operation name is the caller's to invent too, and part of every row's key: names longer than this are recorded as
 * ANONYMOUS_OPERATION (a key of kilobytes is over PostgreSQL's index row limit, and one such row failed every flush
 * after it), and at most MAX_OPERATIONS distinct names are kept between two flushes (the rest as ANONYMOUS_OPERATION).
 */
export const MAX_OPERATION_NAME = 128;
const MAX_OPERATIONS = 1000;
/** Failed flushes kept for the next one (the database unreachable): older ones are dropped, so memory stays bounded. */
const MAX_RETRIED_BATCHES = 30;
const DEFAULT_FLUSH_INTERVAL_MS = 10_000;
/** Rows per upsert statement. */
const CHUNK = 2000;

/** client → requests. */
type Counts = Map<string, number>;
const bump = (counts: Counts, client: string) => counts.set(client, (counts.get(client) ?? 0) + 1);

/** What one GraphQL operation of one document touches, worked out once per parsed document (Yoga caches those). */
interface Shape {
  operation: string;
  coordinates: readonly string[];
}

/**
 * The schema coordinates an operation selects (`Type.field`) and the arguments it passes (`Type.field(arg:)`),
 * through the fragments it spreads; introspection fields are not part of the contract and are left out.
 */
export function operationCoordinates(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): Shape | undefined {
  const operation = getOperationAST(document, operationName);
  if (!operation) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const coordinates = new Set<string>();
  const pending: ASTNode[] = [operation];
  const spread = new Set<string>();
  while (pending.length > 0) {
    const typeInfo = new TypeInfo(schema);
    visit(
      pending.pop()!,
      visitWithTypeInfo(typeInfo, {
        Field() {
          const parent = typeInfo.getParentType();
          const field = typeInfo.getFieldDef();
          if (parent && field && !parent.name.startsWith('__') && !field.name.startsWith('__')) coordinates.add(`${parent.name}.${field.name}`);
        },
        Argument() {
          const parent = typeInfo.getParentType();
          const field = typeInfo.getFieldDef();
          const argument = typeInfo.getArgument();
          if (parent && field && argument && !typeInfo.getDirective() && !parent.name.startsWith('__') && !field.name.startsWith('__'))
            coordinates.add(`${parent.name}.${field.name}(${argument.name}:)`);
        },
        FragmentSpread(node) {
          const fragment = fragments.get(node.name.value);
          if (fragment && !spread.has(node.name.value)) {
            spread.add(node.name.value);
            pending.push(fragment);
          }
        },
      }),
    );
  }
  const name = operation.name?.value;
  return { operation: name !== undefined && name.length <= MAX_OPERATION_NAME ? name : ANONYMOUS_OPERATION, coordinates: [...coordinates] };
}

const userClients = new Map<number, string>();

/** SPEC §6's client: the API key's owner, else the well-formed `X-Client-Name`, else `anonymous` (never an e-mail). */
export function clientOf(principal: Principal | undefined, clientName: string | string[] | undefined): string {
  if (principal?.kind === 'user' && principal.via === 'api_key') {
    let client = userClients.get(principal.userId);
    if (client === undefined) {
      client = `user:${principal.userId}`;
      if (userClients.size < 100_000) userClients.set(principal.userId, client);
    }
    return client;
  }
  return typeof clientName === 'string' && CLIENT_NAME.test(clientName) ? clientName : 'anonymous';
}

/** One flush window's counts. */
class Tally {
  readonly rest = new Map<string, { clients: Counts; parameters: Map<string, Counts> }>();
  readonly graphql = new Map<Shape, Counts>();
  private readonly clients = new Set<string>();
  private readonly operations = new Set<string>();
  /** The same coordinates counted under ANONYMOUS_OPERATION, for a shape whose name is beyond MAX_OPERATIONS. */
  private readonly overflow = new Map<Shape, Shape>();

  /** The shape as counted: its operation name beyond MAX_OPERATIONS distinct ones is ANONYMOUS_OPERATION. */
  admitShape(shape: Shape): Shape {
    if (shape.operation === ANONYMOUS_OPERATION || this.operations.has(shape.operation)) return shape;
    if (this.operations.size < MAX_OPERATIONS) {
      this.operations.add(shape.operation);
      return shape;
    }
    let anonymous = this.overflow.get(shape);
    if (!anonymous) this.overflow.set(shape, (anonymous = { operation: ANONYMOUS_OPERATION, coordinates: shape.coordinates }));
    return anonymous;
  }

  /** The client as counted: an `X-Client-Name` beyond MAX_CLIENTS distinct ones is `anonymous`. */
  admit(client: string): string {
    // Only X-Client-Name is the caller's to invent (it never holds ':'); API key owners and anonymous are not capped.
    if (client === 'anonymous' || client.startsWith('user:') || this.clients.has(client)) return client;
    if (this.clients.size >= MAX_CLIENTS) return 'anonymous';
    this.clients.add(client);
    return client;
  }

  get empty(): boolean {
    return this.rest.size === 0 && this.graphql.size === 0;
  }

  /** The rows to add: `kind`, `coordinate`, `client`, `operation`, `requests`, summed over shapes sharing a coordinate. */
  rows(): [string, string, string, string, number][] {
    const sums = new Map<string, [string, string, string, string, number]>();
    const add = (kind: string, coordinate: string, client: string, operation: string, requests: number) => {
      const key = `${kind}\u0000${coordinate}\u0000${client}\u0000${operation}`;
      const row = sums.get(key);
      if (row) row[4] += requests;
      else sums.set(key, [kind, coordinate, client, operation, requests]);
    };
    for (const [operationId, { clients, parameters }] of this.rest) {
      for (const [client, requests] of clients) add(USAGE_KIND.rest, operationId, client, '', requests);
      for (const [name, counts] of parameters)
        for (const [client, requests] of counts) add(USAGE_KIND.restParameter, `${operationId}?${name}`, client, '', requests);
    }
    for (const [shape, counts] of this.graphql)
      for (const coordinate of shape.coordinates)
        for (const [client, requests] of counts) add(USAGE_KIND.graphql, coordinate, client, shape.operation, requests);
    return [...sums.values()];
  }
}

/** Adds rows to the day's counts: one statement per chunk, whatever the number of instances adding theirs. */
async function upsert(prisma: PrismaClient, day: string, rows: [string, string, string, string, number][]): Promise<void> {
  for (let start = 0; start < rows.length; start += CHUNK) {
    const chunk = rows.slice(start, start + CHUNK);
    const column = (index: number) => chunk.map((row) => row[index]);
    await prisma.$executeRaw(Prisma.sql`
      INSERT INTO contract_usage (kind, coordinate, client, operation, day, requests)
      SELECT kind, coordinate, client, operation, ${day}::date, requests
      FROM unnest(${column(0)}::text[], ${column(1)}::text[], ${column(2)}::text[], ${column(3)}::text[], ${column(4)}::bigint[])
        AS added(kind, coordinate, client, operation, requests)
      ON CONFLICT (kind, coordinate, client, operation, day)
      DO UPDATE SET requests = contract_usage.requests + excluded.requests`);
  }
}

/** The query parameters each operation declares: only those are counted (a client may send any name). */
function declaredQueryParameters(): Map<string, Set<string>> {
  type Parameter = { name?: string; in?: string; $ref?: string };
  const { document } = loadOpenapi();
  const components = (document as { components?: { parameters?: Record<string, Parameter> } }).components?.parameters ?? {};
  const resolve = (parameter: Parameter) => (parameter.$ref ? components[parameter.$ref.split('/').pop()!] : parameter);
  const declared = new Map<string, Set<string>>();
  for (const item of Object.values(document.paths)) {
    const shared = (item as { parameters?: Parameter[] }).parameters ?? [];
    for (const operation of Object.values(item) as { operationId?: string; parameters?: Parameter[] }[]) {
      if (!operation?.operationId) continue;
      const names = [...shared, ...(operation.parameters ?? [])].map(resolve).filter((parameter) => parameter?.in === 'query');
      declared.set(operation.operationId, new Set(names.map((parameter) => parameter!.name!)));
    }
  }
  return declared;
}

async function contractUsagePlugin(app: FastifyInstance): Promise<void> {
  const { enabled, flushIntervalMs = DEFAULT_FLUSH_INTERVAL_MS } = app.config.contractUsage;
  if (!enabled) {
    app.decorate('contractUsage', { graphqlPlugin: {}, flush: async () => undefined } satisfies ContractUsage);
    return;
  }
  const parameters = declaredQueryParameters();
  let tally = new Tally();

  // REST: one Map increment per request (and one per declared query parameter sent), after the answer.
  app.addHook('onResponse', (request, _reply, done) => {
    const operationId = request.routeOptions.config.operationId;
    if (operationId !== undefined) countRest(request, operationId);
    done();
  });
  function countRest(request: FastifyRequest, operationId: string): void {
    let entry = tally.rest.get(operationId);
    if (!entry) tally.rest.set(operationId, (entry = { clients: new Map(), parameters: new Map() }));
    const client = tally.admit(clientOf(request.principal, request.headers['x-client-name']));
    bump(entry.clients, client);
    const declared = parameters.get(operationId);
    const query = request.query as Record<string, unknown> | undefined;
    if (!declared || !query || typeof query !== 'object') return;
    for (const name in query) {
      if (!declared.has(name)) continue;
      let counts = entry.parameters.get(name);
      if (!counts) entry.parameters.set(name, (counts = new Map()));
      bump(counts, client);
    }
  }

  // GraphQL: the coordinates of a (document, operation) are walked once; each execution is one Map increment.
  const shapes = new WeakMap<DocumentNode, Map<string, Shape | null>>();
  function countGraphQL(args: { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null | undefined; contextValue: unknown }) {
    let byOperation = shapes.get(args.document);
    if (!byOperation) shapes.set(args.document, (byOperation = new Map()));
    const name = args.operationName ?? '';
    let known = byOperation.get(name);
    if (known === undefined) byOperation.set(name, (known = operationCoordinates(args.schema, args.document, args.operationName) ?? null));
    if (!known) return;
    const shape = tally.admitShape(known);
    const context = args.contextValue as { principal?: Principal; request?: FastifyRequest } | undefined;
    const client = tally.admit(clientOf(context?.principal, context?.request?.headers['x-client-name']));
    let counts = tally.graphql.get(shape);
    if (!counts) tally.graphql.set(shape, (counts = new Map()));
    bump(counts, client);
  }
  const graphqlPlugin: Plugin = {
    onExecute: ({ args }) => countGraphQL(args),
    onSubscribe: ({ args }) => countGraphQL(args),
  };

  // One flush at a time; a failed one keeps its rows for the next.
  let retry: [string, [string, string, string, string, number][]][] = [];
  let flushing: Promise<void> = Promise.resolve();
  const flushNow = async () => {
    const taken = tally;
    tally = new Tally();
    // The day the counts are added on: the flush's (a window of a few seconds may cross midnight into the next day).
    const batches = [...retry, ...(taken.empty ? [] : [[new Date().toISOString().slice(0, 10), taken.rows()] as (typeof retry)[number]])];
    if (batches.length > MAX_RETRIED_BATCHES) {
      app.log.warn({ dropped: batches.length - MAX_RETRIED_BATCHES }, 'contract usage: the oldest unrecorded flushes dropped');
      batches.splice(0, batches.length - MAX_RETRIED_BATCHES);
    }
    retry = [];
    for (const [index, [day, rows]] of batches.entries()) {
      try {
        await upsert(app.db.prisma, day, rows);
      } catch (error) {
        retry = batches.slice(index);
        app.log.warn({ err: error }, 'contract usage not recorded yet: retried at the next flush');
        return;
      }
    }
  };
  const flush = () => (flushing = flushing.then(flushNow));
  const timer = setInterval(() => void flush(), flushIntervalMs).unref();
  // Before the database closes (its onClose runs after this one: registered earlier).
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await flush();
  });
  app.decorate('contractUsage', { graphqlPlugin, flush } satisfies ContractUsage);
}

export default fp(contractUsagePlugin, { name: 'contract-usage', dependencies: ['database', 'auth'] });
