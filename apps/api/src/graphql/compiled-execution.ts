// Compiled execution of queries (graphql-jit), with graphql-js's executor as the reference for every answer that has an error.
//
// Why: for a nested read the executor was the largest cost of the request (graphql-js completes each field through
// generic code and promise helpers, and its result objects are null-prototype dictionaries that JSON.stringify walks
// slowly); graphql-jit compiles an operation to one function per document, ~7× faster on `users → posts → author`.
// graphql-jit differs from graphql-js on error paths (null propagation, error shapes and paths) and on variables
// (a variable left out of an input object becomes an explicit null: graphql-jit#230). So a compiled run is used only
// where the two cannot differ:
// - queries only (a mutation runs once and in order; a subscription is an event stream): the rest goes to graphql-js;
// - every variable the operation declares is given a value or has a default, and graphql-js coerces them all;
// - the answer has no error at all: otherwise it is discarded and the query is run again by graphql-js, whose answer
//   is sent (queries read, so a second run changes nothing; the work budget is rewound to where the first run began,
//   so the second run is charged as if it were the only one, and a request already over its budget is not re-run).
// A document is compiled on its `afterExecutions`-th execution (compiling costs about as much as running a large
// query once; most documents of a client repeat, a one-off document never pays it), and the compiled function is kept
// with the parsed document, which Yoga's parse cache keeps for as long as the text is in use.
//
// Written by hand: @envelop/graphql-jit compiles and runs the compiled function, but has no reference fallback.
import { getOperationAST, getVariableValues, type DocumentNode, type ExecutionArgs, type OperationDefinitionNode } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';
import { budgetCheckpoint } from './budget.js';

export interface CompiledExecutionOptions {
  /** A document is compiled when it is executed for this many times (1: at once). */
  afterExecutions: number;
  /** Told which executor's answer was sent for each compiled run (the metrics). */
  onAnswered?: (answeredBy: 'compiled' | 'graphql-js') => void;
}

/** Per operation of a document: executions so far, then its compiled form (null when it could not be compiled). */
interface OperationState {
  executions: number;
  compiled?: CompiledQuery | null;
}

type ExecuteFn = (args: ExecutionArgs) => unknown;

const isPromise = (value: unknown): value is Promise<unknown> => typeof (value as Promise<unknown> | null)?.then === 'function';
const hasErrors = (result: unknown) => ((result as { errors?: readonly unknown[] } | null)?.errors?.length ?? 0) > 0;

/** True when every declared variable is given (or defaulted) and graphql-js coerces them: jit and graphql-js then see the same arguments. */
function variablesAgree(args: ExecutionArgs, operation: OperationDefinitionNode): boolean {
  const definitions = operation.variableDefinitions ?? [];
  if (definitions.length === 0) return true;
  const given = (args.variableValues ?? {}) as Record<string, unknown>;
  for (const definition of definitions) {
    if (given[definition.variable.name.value] === undefined && !definition.defaultValue) return false;
  }
  return !getVariableValues(args.schema, definitions, given, { maxErrors: 1 }).errors;
}

export function compiledExecutionPlugin(options: CompiledExecutionOptions): Plugin {
  const states = new WeakMap<DocumentNode, Map<string, OperationState>>();

  const stateOf = (document: DocumentNode, operationName: string | null | undefined): OperationState => {
    let byName = states.get(document);
    if (!byName) states.set(document, (byName = new Map()));
    const key = operationName ?? '';
    let state = byName.get(key);
    if (!state) byName.set(key, (state = { executions: 0 }));
    return state;
  };

  const compiledFor = (args: ExecutionArgs): CompiledQuery | undefined => {
    const operation = getOperationAST(args.document, args.operationName);
    if (operation?.operation !== 'query' || !variablesAgree(args, operation)) return undefined;
    const state = stateOf(args.document, args.operationName);
    if (state.compiled === undefined && ++state.executions >= options.afterExecutions) {
      // Leaf serialization stays on (the same scalar checks as graphql-js); stack traces of discarded errors are not captured.
      const compiled = compileQuery(args.schema, args.document, args.operationName ?? undefined, { disablingCapturingStackErrors: true });
      state.compiled = isCompiledQuery(compiled) ? compiled : null;
    }
    return state.compiled ?? undefined;
  };

  const run = (compiled: CompiledQuery, reference: ExecuteFn, args: ExecutionArgs): unknown => {
    const checkpoint = budgetCheckpoint(args.contextValue);
    const settle = (result: unknown) => {
      if (hasErrors(result) && checkpoint.rewind()) {
        options.onAnswered?.('graphql-js');
        return reference(args);
      }
      options.onAnswered?.('compiled');
      return result;
    };
    const result = compiled.query(args.rootValue, args.contextValue, args.variableValues);
    return isPromise(result) ? result.then(settle) : settle(result);
  };

  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const compiled = compiledFor(args);
      if (compiled) setExecuteFn((executeArgs) => run(compiled, executeFn as ExecuteFn, executeArgs) as ReturnType<typeof executeFn>);
    },
  };
}
