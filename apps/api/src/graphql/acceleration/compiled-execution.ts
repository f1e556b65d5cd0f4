// Compiled execution of queries (graphql-jit), with graphql-js's executor as the reference for every answer that has an error.
//
// Why: for a nested read the executor was the largest cost of the request (graphql-js completes each field through
// generic code and promise helpers, and its result objects are null-prototype dictionaries that JSON.stringify walks
// slowly); graphql-jit compiles an operation to one function per document, ~7× faster on `users → posts → author`.
//
// graphql-jit generates JavaScript source from the document, and differs from graphql-js in places. So a document is
// compiled only when it is of the plain shape where the two cannot differ and the source cannot carry anything of the
// client's (`isCompilable`, checked once per document; an attacker's review found each of these):
// - one operation, a query (a mutation runs once and in order; a subscription is an event stream);
// - no string literal anywhere: graphql-jit writes literal arguments into its source and turns a string of its own
//   marker form into code (`"__MAGIC_DATE__…(x)"` becomes `new Date(x)`: remote code execution); strings come as
//   variables, which reach the compiled function as values;
// - no directive (graphql-jit's @skip/@include answer differently on merged fields and write onto the shared AST),
//   no introspection field, no response key starting with `__` (`__proto__` as an alias is dropped) and none that
//   contains `_` or reads `idx<n>` (graphql-jit names each field's arguments and resolve info by its response path
//   joined with `_`, list items as `idx<n>`: `posts_idx0_users` as an alias would share them with `users { posts }`),
//   no enum literal starting with `__` (graphql-jit's markers);
// - at most MAX_COMPILED_FIELDS fields with every fragment spread expanded (graphql-jit inlines each spread: a chain of
//   fragments that costs nothing to execute can take seconds and hundreds of megabytes to compile).
// And at run time:
// - only on the single-operation HTTP path (http-fast-path.ts marks its context): a batch shares one work budget,
//   which a re-run could not rewind for its own charges alone;
// - every variable the operation declares is given a value or has a default, and graphql-js coerces them all (a
//   variable left out of an input object becomes an explicit null in graphql-jit: graphql-jit#230);
// - the answer has no error at all: otherwise (or when the compiled function throws) it is discarded and the query is
//   run again by graphql-js, whose answer is sent (queries read, so a second run changes nothing; the work budget is
//   rewound to where the first run began, and a request already over its budget is not re-run).
// A document is compiled on its `afterExecutions`-th execution (compiling costs about as much as running a large query
// once; a one-off document never pays it), on a private copy of its AST, within a process-wide budget of compilations
// per second (a client sending ever new documents gets graphql-js, not a compiler at its command), and compiled
// functions of at most MAX_KEPT_FIELDS fields in all are kept (least recently used out). V8 keeps the source of every
// `new Function` in its compilation cache for good (measured: 65 MB kept for 300 functions after full collections),
// so that cache is turned off for the process while compiled execution is on; it serves only code compiled twice
// from the same source, which a server does not do.
//
// Written by hand: @envelop/graphql-jit compiles and runs the compiled function, but has none of these guards.
import {
  getVariableValues,
  Kind,
  type DocumentNode,
  type ExecutionArgs,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import v8 from 'node:v8';
import { budgetCheckpoint } from '../guards/budget.js';

export interface CompiledExecutionOptions {
  /** A document is compiled when it is executed for this many times (1: at once). */
  afterExecutions: number;
  /** Given the compiled functions' store once built (its bound is MAX_KEPT_FIELDS fields), to declare it. */
  declareStore?: (size: () => { entries: number; bytes: number }) => void;
  /** The process's compilations: at most `compileBurst` at once, then `compilesPerSecond` (defaults: COMPILE_BURST, COMPILES_PER_SECOND). */
  compileBurst?: number;
  compilesPerSecond?: number;
  /**
   * The context graphql-js re-runs a query with, given the compiled run's errors (default: the same). With the
   * database unreachable the re-run would wait for the same timeouts again, past the request's deadline: the graphql
   * plugin gives one whose services fail at once with the same error (context.ts), so the answer keeps graphql-js's
   * shape and arrives in time.
   */
  referenceContext?: (context: unknown, errors: readonly unknown[]) => { context: unknown; waitsOnNothing: boolean } | undefined;
  /** Told which executor's answer was sent for each compiled run (the metrics). */
  onAnswered?: (answeredBy: 'compiled' | 'graphql-js') => void;
}

/** Fields of a compiled operation, every fragment spread expanded (the nested bench query has 7). */
export const MAX_COMPILED_FIELDS = 200;
/** Fields of all compiled functions kept (graphql-jit generates ~1.2 KB of source per field). */
export const MAX_KEPT_FIELDS = 5_000;
/** Bytes a compiled field is taken to hold (its generated source and closure). */
export const BYTES_PER_FIELD = 2_048;
/** Compilations the process allows: a burst, then a steady rate per second. */
export const COMPILE_BURST = 20;
export const COMPILES_PER_SECOND = 10;

/** Set on the context by the single-operation HTTP path: the only place a compiled run is used. */
export const COMPILABLE_REQUEST = Symbol('a single-operation HTTP request');

/** A literal graphql-jit may write into its source: numbers, booleans, null and enum names (GraphQL Names), or a variable. */
function isSafeValue(value: ValueNode): boolean {
  switch (value.kind) {
    case Kind.VARIABLE:
    case Kind.INT:
    case Kind.FLOAT:
    case Kind.BOOLEAN:
    case Kind.NULL:
      return true;
    case Kind.ENUM:
      return !value.value.startsWith('__');
    case Kind.LIST:
      return value.values.every(isSafeValue);
    case Kind.OBJECT:
      return value.fields.every((field) => isSafeValue(field.value));
    default:
      return false; // a string (or any kind added later)
  }
}

/** A response key graphql-jit's generated names keep apart: no `_` (its path separator), not a list-item key `idx<n>`. */
const isDistinctKey = (key: string) => key === '__typename' || (!key.includes('_') && !/^idx\d+$/.test(key));

/** The document's one query with its field count, when it is of the shape compiled (see the header); undefined otherwise. */
export function compilableQuery(document: DocumentNode): { query: OperationDefinitionNode; fields: number } | undefined {
  const operations = document.definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION);
  const operation = operations.length === 1 ? operations[0]! : undefined;
  if (operation?.operation !== 'query' || operation.directives?.length) return undefined;
  for (const variable of operation.variableDefinitions ?? []) {
    if (variable.directives?.length || (variable.defaultValue && !isSafeValue(variable.defaultValue))) return undefined;
  }
  // bound: per call
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  let fields = 0;
  const plain = (selectionSet: SelectionSetNode): boolean =>
    selectionSet.selections.every((selection) => {
      if (selection.directives?.length) return false;
      if (selection.kind === Kind.INLINE_FRAGMENT) return plain(selection.selectionSet);
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        return fragment !== undefined && !fragment.directives?.length && plain(fragment.selectionSet);
      }
      if (!isDistinctKey(selection.name.value) || (selection.alias && !isDistinctKey(selection.alias.value))) return false;
      if (++fields > MAX_COMPILED_FIELDS) return false;
      if (!(selection.arguments ?? []).every((argument) => isSafeValue(argument.value))) return false;
      return selection.selectionSet ? plain(selection.selectionSet) : true;
    });
  return plain(operation.selectionSet) ? { query: operation, fields } : undefined;
}

/** True when every declared variable is given (or defaulted) and graphql-js coerces them: jit and graphql-js then see the same arguments. */
function variablesAgree(args: ExecutionArgs, operation: OperationDefinitionNode): boolean {
  const definitions = operation.variableDefinitions ?? [];
  if (definitions.length === 0) return true;
  const given = (args.variableValues ?? {}) as Record<string, unknown>;
  for (const definition of definitions) {
    const name = definition.variable.name.value;
    if ((!Object.hasOwn(given, name) || given[name] === undefined) && !definition.defaultValue) return false;
  }
  return !getVariableValues(args.schema, definitions, given, { maxErrors: 1 }).errors;
}

/** The document without locations, as a private copy: graphql-jit annotates the nodes it compiles. */
const privateCopy = (document: DocumentNode): DocumentNode =>
  JSON.parse(JSON.stringify(document, (key, value: unknown) => (key === 'loc' ? undefined : value)));

/** Per document seen: its one compilable query (null when it has none) and its fields, and its executions until compiled. */
interface DocumentState {
  query: OperationDefinitionNode | null;
  fields: number;
  executions: number;
}

/** The process's compilations: a token bucket (written by hand: a counter and a clock). */
function compileBudget(burst: number, perSecond: number): () => boolean {
  let tokens = burst;
  let last = Date.now();
  return () => {
    const now = Date.now();
    tokens = Math.min(burst, tokens + ((now - last) / 1000) * perSecond);
    last = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}

type ExecuteFn = (args: ExecutionArgs) => unknown;

const isPromise = (value: unknown): value is Promise<unknown> => typeof (value as Promise<unknown> | null)?.then === 'function';
const hasErrors = (result: unknown) => ((result as { errors?: readonly unknown[] } | null)?.errors?.length ?? 0) > 0;

export function compiledExecutionPlugin(options: CompiledExecutionOptions): Plugin {
  v8.setFlagsFromString('--no-compilation-cache'); // see the header
  const states = new WeakMap<DocumentNode, DocumentState>();
  // bound: MAX_KEPT_FIELDS fields (store graphql-compiled-documents)
  const compiledDocuments = new LRUCache<DocumentNode, CompiledQuery>({
    maxSize: MAX_KEPT_FIELDS,
    sizeCalculation: (_compiled, document) => states.get(document)?.fields ?? MAX_COMPILED_FIELDS,
  });
  options.declareStore?.(() => ({ entries: compiledDocuments.size, bytes: compiledDocuments.calculatedSize * BYTES_PER_FIELD }));
  const mayCompile = compileBudget(options.compileBurst ?? COMPILE_BURST, options.compilesPerSecond ?? COMPILES_PER_SECOND);

  const compiledFor = (args: ExecutionArgs): CompiledQuery | undefined => {
    if ((args.contextValue as Record<symbol, unknown> | null)?.[COMPILABLE_REQUEST] !== true) return undefined;
    let state = states.get(args.document);
    if (!state) {
      const compilable = compilableQuery(args.document);
      states.set(args.document, (state = { query: compilable?.query ?? null, fields: compilable?.fields ?? 0, executions: 0 }));
    }
    const { query } = state;
    if (!query || (args.operationName != null && args.operationName !== query.name?.value) || !variablesAgree(args, query)) return undefined;
    const kept = compiledDocuments.get(args.document);
    if (kept || ++state.executions < options.afterExecutions || !mayCompile()) return kept;
    // Leaf serialization stays on (the same scalar checks as graphql-js); stack traces of discarded errors are not captured.
    const compiled = compileQuery(args.schema, privateCopy(args.document), undefined, { disablingCapturingStackErrors: true });
    if (!isCompiledQuery(compiled)) {
      state.query = null; // graphql-jit refused it: graphql-js runs it from now on
      return undefined;
    }
    compiledDocuments.set(args.document, compiled);
    return compiled;
  };

  const run = (compiled: CompiledQuery, reference: ExecuteFn, args: ExecutionArgs): unknown => {
    const checkpoint = budgetCheckpoint(args.contextValue);
    /** graphql-js's run instead, when the budget lets one follow (else the work limit answers its own error). */
    const fallBack = (errors: readonly unknown[]): unknown => {
      const replacement = options.referenceContext?.(args.contextValue, errors);
      if (!checkpoint.rewind(replacement?.waitsOnNothing)) return { errors: [] };
      options.onAnswered?.('graphql-js');
      return reference(replacement ? { ...args, contextValue: replacement.context } : args);
    };
    const settle = (result: unknown) => {
      if (hasErrors(result)) return fallBack((result as { errors: readonly unknown[] }).errors);
      options.onAnswered?.('compiled');
      return result;
    };
    let result: unknown;
    try {
      result = compiled.query(args.rootValue, args.contextValue, args.variableValues);
    } catch (error) {
      return fallBack([error]);
    }
    return isPromise(result) ? result.then(settle, (error: unknown) => fallBack([error])) : settle(result);
  };

  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const compiled = compiledFor(args);
      if (compiled) setExecuteFn((executeArgs) => run(compiled, executeFn as ExecuteFn, executeArgs) as ReturnType<typeof executeFn>);
    },
  };
}
