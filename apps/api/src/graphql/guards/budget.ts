// The bounded work of one request (SPEC §2): the cost limit over the whole HTTP request, and the run-time budget.
//
// Written by hand (no kept library counts resolved nodes per request across a batch): an envelop plugin checks the
// cost of each operation with its variables (cost.ts) and adds it to the request's total (every alias and every
// operation of a batch: Yoga runs each batched operation through envelop separately, all with the same Fastify
// request), and gives the operation a meter that the resolver wrapper (meterResolvers) charges per resolved object
// or list item and checks against the request's deadline.
import { MapperKind, mapSchema } from '@graphql-tools/utils';
import {
  defaultFieldResolver,
  getNamedType,
  getOperationAST,
  getVariableValues,
  isObjectType,
  Kind,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FragmentDefinitionNode,
  type GraphQLError,
  type GraphQLFieldResolver,
  type GraphQLSchema,
} from 'graphql';
import { createGraphQLError, isAsyncIterable, Repeater, type Plugin } from 'graphql-yoga';
import { documentOperationCost } from './cost.js';
import { GraphQLOnlyCodes } from '../../errors/app-error.js';

export interface WorkLimits {
  maxCost: number;
  /** Objects and list items one HTTP request (or one subscription event) may resolve. */
  maxNodes: number;
  /** Wall-clock time one HTTP request (or one subscription event) may spend resolving. */
  maxExecutionMs: number;
}

/** What one HTTP request (or one subscription event) has left to spend at run time. */
interface Budget {
  nodesLeft: number;
  deadline: number;
  exceeded?: GraphQLError;
  /** Nodes resolved since the event loop was last let through (see `YIELD_EVERY_NODES`). */
  sinceYield: number;
  /** Checks since the clock was last read (see `CLOCK_EVERY_CHECKS`). */
  sinceClock: number;
  /** While set, metered results wait here and are released a slice per event-loop turn (see `throughGate`). */
  parked?: Parked | undefined;
  /**
   * Settles when the budget is exceeded: the request's answer is then the one error at once, and the resolvers still
   * pending are left unsettled instead of each throwing (thousands of located errors, the costliest part of an
   * over-budget request; an AbortSignal does the same, since the executor checks it in every field).
   */
  stopped?: { promise: Promise<void>; stop: () => void } | undefined;
}

/** Installed in each operation's context: one budget for a query or mutation, one per event for a subscription. */
/** Results waiting for their turn, in arrival order; `next` is the first not yet released. */
interface Parked {
  items: { release: () => void; nodes: number }[];
  next: number;
}

interface Meter {
  limits: WorkLimits;
  shared?: Budget;
  perEvent?: WeakMap<object, Budget>;
}

const METER = Symbol('graphql work meter');

/** What one HTTP request has spent so far, across its batched operations. */
interface RequestUsage {
  cost: number;
  budget: Budget;
}

const usageByRequest = new WeakMap<object, RequestUsage>();

export function tooComplex(message: string): GraphQLError {
  return createGraphQLError(message, { extensions: { code: GraphQLOnlyCodes.QUERY_TOO_COMPLEX, http: { status: 400 } } });
}

const newBudget = (limits: WorkLimits): Budget => ({
  nodesLeft: limits.maxNodes,
  deadline: Date.now() + limits.maxExecutionMs,
  sinceYield: 0,
  sinceClock: 0,
});

/**
 * A large accepted request resolves its nodes in long microtask chains (DataLoader promises, graphql-js completing a
 * whole list level) that would hold the event loop for the whole request: `/healthz` and every other client would wait.
 * After this many nodes the meter closes a gate that opens on `setImmediate`, so pending I/O is served in between;
 * small requests never reach it and pay nothing.
 */
export const YIELD_EVERY_NODES = 1000;

function costOf(args: ExecutionArgs, ceiling: number): number | undefined {
  const operation = getOperationAST(args.document, args.operationName);
  if (!operation) return undefined; // Execution reports it, running nothing.
  const coerced = getVariableValues(args.schema, operation.variableDefinitions ?? [], (args.variableValues ?? {}) as Record<string, unknown>, {
    maxErrors: 1,
  });
  if (coerced.errors) return undefined; // Likewise: invalid variables run nothing.
  const fragments = fragmentsOf(args.document);
  return documentOperationCost({ schema: args.schema, document: args.document, fragments, operation, variables: coerced.coerced, ceiling });
}

function fragmentsOf(document: DocumentNode): Record<string, FragmentDefinitionNode> {
  const fragments: Record<string, FragmentDefinitionNode> = Object.create(null);
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  }
  return fragments;
}

/** The request's running totals; a WebSocket operation (no HTTP request) is its own request. */
function usageOf(request: object | undefined, limits: WorkLimits): RequestUsage {
  if (!request) return { cost: 0, budget: newBudget(limits) };
  let usage = usageByRequest.get(request);
  if (!usage) {
    usage = { cost: 0, budget: newBudget(limits) };
    usageByRequest.set(request, usage);
  }
  return usage;
}

/**
 * Refuses an operation whose cost would take its request over `maxCost` (nothing of it runs), else records the cost
 * and installs the meter. Runs at execute/subscribe, when the variables are known (validation does not see them).
 */
export function workLimitPlugin(limits: WorkLimits): Plugin {
  const admit = (args: ExecutionArgs, subscription: boolean): GraphQLError | undefined => {
    const context = args.contextValue as { request?: object } & Record<symbol, unknown>;
    const usage = usageOf(context.request, limits);
    const cost = costOf(args, limits.maxCost - usage.cost);
    if (cost === undefined) return undefined;
    if (usage.cost + cost > limits.maxCost) {
      const said = Number.isFinite(usage.cost + cost) ? `${usage.cost + cost}` : `more than ${limits.maxCost}`;
      usage.cost = Number.POSITIVE_INFINITY; // The request is over: its later operations are refused too.
      return tooComplex(`Query cost ${said} exceeds the maximum cost of ${limits.maxCost} for one request (all its operations together)`);
    }
    usage.cost += cost;
    const meter: Meter = subscription ? { limits, perEvent: new WeakMap() } : { limits, shared: usage.budget };
    context[METER] = meter;
    return undefined;
  };
  return {
    onExecute({ args, executeFn, setExecuteFn, setResultAndStopExecution }) {
      const refused = admit(args, false);
      if (refused) return setResultAndStopExecution({ errors: [refused] });
      const meter = (args.contextValue as unknown as Record<symbol, Meter | undefined>)[METER];
      const budget = meter?.shared;
      if (budget) {
        budget.stopped ??= stopSignal();
        const stopped = budget.stopped.promise.then(() => ({ data: null, errors: [budget.exceeded!] }));
        setExecuteFn((executeArgs) => {
          if (budget.exceeded) return { data: null, errors: [budget.exceeded] };
          const result = executeFn(executeArgs);
          return isPromise(result) ? Promise.race([result, stopped]) : result;
        });
      }
      return {
        // Over budget: one error and no data (a list cut at an arbitrary point would look complete).
        onExecuteDone({ result, setResult }) {
          if (!budget) return;
          if (isAsyncIterable(result)) return setResult(endWhenStopped(result, budget));
          if (budget.exceeded) setResult({ data: null, errors: [budget.exceeded] });
        },
      };
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const refused = admit(args, true);
      if (refused) setResultAndStopExecution({ errors: [refused] });
    },
  };
}

/**
 * Incremental delivery (@defer, @stream): the parts of a request that runs out of its budget end with a last part
 * carrying the error (`hasNext: false`). Its resolvers are left unsettled once it is stopped (`abandoned`), so without
 * this the stream would wait for them forever, holding the connection.
 */
function endWhenStopped<Part extends ExecutionResult>(parts: AsyncIterable<Part>, budget: Budget): Repeater<Part | LastPart> {
  const stopped = budget.stopped!.promise.then((): typeof STOPPED => STOPPED);
  return new Repeater<Part | LastPart>(async (push, stop) => {
    const iterator = parts[Symbol.asyncIterator]();
    let ended = false;
    void stop.then(() => (ended = true));
    while (!ended) {
      const next = await Promise.race([iterator.next(), stopped, stop.then((): typeof STOPPED => STOPPED)]);
      if (typeof next === 'symbol') {
        if (budget.exceeded && !ended) await push({ hasNext: false, errors: [budget.exceeded] });
        break;
      }
      if (next.done) break;
      await push(next.value);
    }
    // Not awaited: a stopped execution's generator waits on its abandoned resolvers and would never answer.
    void iterator.return?.();
    stop();
  });
}

const STOPPED: unique symbol = Symbol('stopped');
/** The part that ends an incremental answer (the 2022-08-24 format's `hasNext`). */
type LastPart = ExecutionResult & { hasNext: false };

/** The budget this resolver charges: the request's, or for a subscription the current event's (its root value). */
function budgetOf(context: unknown, rootValue: unknown): Budget | undefined {
  const meter = (context as Record<symbol, Meter | undefined> | null)?.[METER];
  if (!meter) return undefined;
  if (meter.shared) return meter.shared;
  if (!meter.perEvent || typeof rootValue !== 'object' || rootValue === null) return undefined;
  let budget = meter.perEvent.get(rootValue);
  if (!budget) {
    budget = newBudget(meter.limits);
    meter.perEvent.set(rootValue, budget);
  }
  return budget;
}

/**
 * Where the budget of an operation stands before a run that may be discarded (compiled-execution.ts): `rewind()` gives
 * back the nodes charged since, so the run that replaces it is charged as if it were the only one, and says whether a
 * run may still follow (false once the request is over its budget: its answer is that error, nothing is re-run).
 * `rewind(true)` also gives back the time spent since, for a replacing run that cannot wait on anything (its services
 * fail at once): otherwise a first run that waited out the database's timeout would leave it none.
 */
export function budgetCheckpoint(context: unknown): { rewind: (restartClock?: boolean) => boolean } {
  const budget = budgetOf(context, undefined);
  if (!budget) return { rewind: () => true };
  const { nodesLeft, deadline } = budget;
  const startedAt = Date.now();
  return {
    rewind: (restartClock = false) => {
      if (budget.exceeded) return false;
      budget.nodesLeft = nodesLeft;
      if (restartClock) budget.deadline = Date.now() + (deadline - startedAt);
      return true;
    },
  };
}

/**
 * What a resolver returns once its request was stopped: the answer is already given, so this branch is left
 * unsettled (a fresh promise each time, so nothing keeps the abandoned execution reachable).
 */
const abandoned = () => new Promise<never>(() => {});

/**
 * How many checks in a row may go without reading the clock, when nothing was waited for in between. Reading it cost
 * 39 ns here, twice per resolved object: 3.7 % of the CPU of `users(limit: 50) → posts → author` (`pnpm
 * bench:profile`). Between two reads at most this many resolvers run without waiting: microseconds past the deadline,
 * which is seconds. After a wait (a promise settled: the database, a DataLoader batch) the clock is always read.
 */
const CLOCK_EVERY_CHECKS = 32;

function check(budget: Budget, waited = false): void {
  if (budget.exceeded) throw budget.exceeded;
  if (!waited && ++budget.sinceClock < CLOCK_EVERY_CHECKS) return;
  budget.sinceClock = 0;
  if (Date.now() > budget.deadline) {
    throw exceed(budget, 'The request ran out of its execution time and was stopped');
  }
}

/**
 * Text fields long enough to amplify a response on their own (a post's content is up to 50 000 characters: 15 aliases
 * of `posts { content }` would otherwise answer with hundreds of megabytes at a cost of 1 500): each charges one
 * node per this many characters, so the node budget also bounds the response size (50 000 nodes ≈ 5 MB of text).
 */
export const CHARACTERS_PER_NODE = 100;
const LONG_TEXT_FIELDS = new Set(['Post.content']);

function chargeText<T>(budget: Budget, value: T, waited: boolean): T {
  if (typeof value === 'string') {
    const nodes = Math.ceil(value.length / CHARACTERS_PER_NODE);
    budget.nodesLeft -= nodes;
    budget.sinceYield += nodes;
  }
  return settle(budget, value, waited);
}

function charge<T>(budget: Budget, value: T, waited: boolean): T {
  const nodes = Array.isArray(value) ? value.length : value == null ? 0 : 1;
  budget.nodesLeft -= nodes;
  budget.sinceYield += nodes;
  return settle(budget, value, waited);
}

function settle<T>(budget: Budget, value: T, waited: boolean): T {
  if (budget.nodesLeft < 0 && !budget.exceeded) exceed(budget, 'The request resolved more objects than one request may and was stopped');
  check(budget, waited);
  return value;
}

function exceed(budget: Budget, message: string): GraphQLError {
  budget.exceeded = tooComplex(message);
  budget.stopped?.stop();
  return budget.exceeded;
}

function stopSignal(): { promise: Promise<void>; stop: () => void } {
  let stop!: () => void;
  const promise = new Promise<void>((resolve) => (stop = resolve));
  return { promise, stop };
}

const isPromise = (value: unknown): value is Promise<unknown> => typeof (value as Promise<unknown> | null)?.then === 'function';

/**
 * The value itself while fewer than `YIELD_EVERY_NODES` were resolved since the last turn; past that, a promise of it
 * that is released on a later turn of the event loop, at most about `YIELD_EVERY_NODES` nodes' worth per turn. One shared
 * gate would not do: opening it would resume every parked branch in one burst (thousands of list completions).
 */
function throughGate<T>(budget: Budget, value: T, nodes: number): T | Promise<T> {
  if (!budget.parked && budget.sinceYield < YIELD_EVERY_NODES) return value;
  const parked = (budget.parked ??= { items: [], next: 0 });
  if (parked.items.length === parked.next) setImmediate(() => releaseSlice(budget));
  return new Promise<T>((resolve) => parked.items.push({ release: () => resolve(value), nodes: Math.max(1, nodes) }));
}

function releaseSlice(budget: Budget): void {
  const parked = budget.parked;
  if (!parked) return;
  budget.sinceYield = 0;
  let released = 0;
  while (parked.next < parked.items.length && released < YIELD_EVERY_NODES) {
    const item = parked.items[parked.next++]!;
    released += item.nodes;
    item.release();
  }
  if (parked.next < parked.items.length) setImmediate(() => releaseSlice(budget));
  else budget.parked = undefined;
}

function metered(resolve: GraphQLFieldResolver<unknown, unknown>, cost: typeof charge): GraphQLFieldResolver<unknown, unknown> {
  return (source, args, context, info) => {
    const budget = budgetOf(context, info.rootValue);
    if (!budget) return resolve(source, args, context, info);
    // A stopped request has its answer: a throw here would only build another located error for nobody.
    const stoppable = budget.stopped !== undefined;
    const guarded = (run: () => unknown) => {
      if (stoppable && budget.exceeded) return abandoned();
      try {
        return run();
      } catch (error) {
        if (stoppable && error === budget.exceeded) return abandoned();
        throw error;
      }
    };
    return guarded(() => {
      check(budget);
      const value = resolve(source, args, context, info);
      const settled = (resolved: unknown, waited: boolean) =>
        guarded(() => throughGate(budget, cost(budget, resolved, waited), Array.isArray(resolved) ? resolved.length : 1));
      return value instanceof Promise ? value.then((resolved) => settled(resolved, true)) : settled(value, false);
    });
  };
}

/**
 * Wraps the resolvers of object- and list-of-object fields with the meter, and of the long text fields; other scalar
 * fields are not wrapped (most of a response's fields are scalars: the overhead stays with the fields that fan out).
 */
export function meterResolvers(schema: GraphQLSchema): GraphQLSchema {
  return mapSchema(schema, {
    [MapperKind.OBJECT_FIELD]: (field, name, typeName) => {
      const resolve = field.resolve ?? defaultFieldResolver;
      if (isObjectType(getNamedType(field.type))) return { ...field, resolve: metered(resolve, charge) };
      return LONG_TEXT_FIELDS.has(`${typeName}.${name}`) ? { ...field, resolve: metered(resolve, chargeText) } : field;
    },
  });
}
