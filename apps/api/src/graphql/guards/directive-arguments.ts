// Directive arguments are the client's input (issue 40, STREAM-NEGATIVE-500): refused before execution when they cannot run.
//
// The schema's types already refuse a wrong literal (`if: "x"`, `initialCount: 1e10`). What they let through reached
// the executor's invariants as an internal error with a logged stack: `@stream(initialCount: -1)` or `null`
// (@graphql-tools/executor asserts a number ≥ 0 only while it runs), and a variable that is null where the argument is
// `Boolean!` (`@include(if: $v)`, allowed by validation because the argument has a default). Literals are refused by a
// validation rule (GRAPHQL_VALIDATION_FAILED); variables, known only at execution, by coercing every directive that
// reads one before anything runs (BAD_USER_INPUT), which also spares the cost walk (cost.ts) values it cannot read.
import {
  getDirectiveValues,
  getOperationAST,
  getVariableValues,
  GraphQLError,
  Kind,
  visit,
  BREAK,
  type ASTVisitor,
  type DirectiveNode,
  type DocumentNode,
  type ExecutionArgs,
  type ValidationContext,
  type ValueNode,
  separateOperations,
} from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';

const STREAM = 'stream';
const INITIAL_COUNT = 'initialCount';

const negativeCount = (value: unknown) => value === null || (typeof value === 'number' && value < 0);
const countMessage = (given: string) => `@stream's initialCount must be an integer of 0 or more (got ${given})`;

/** `@stream(initialCount:)` given as a literal: 0 or more (null would reach the executor's invariant too). */
function StreamInitialCountRule(context: ValidationContext): ASTVisitor {
  return {
    Directive(node) {
      if (node.name.value !== STREAM) return;
      const value = node.arguments?.find((argument) => argument.name.value === INITIAL_COUNT)?.value;
      if (value?.kind === Kind.NULL || (value?.kind === Kind.INT && Number(value.value) < 0)) {
        context.reportError(new GraphQLError(countMessage(value.kind === Kind.NULL ? 'null' : value.value), { nodes: node }));
      }
    },
  };
}

/** Whether any directive of the document takes a variable (most do not: then nothing is checked at execution). */
const readsVariables = new WeakMap<DocumentNode, boolean>();

function directivesReadVariables(document: DocumentNode): boolean {
  let found = readsVariables.get(document);
  if (found !== undefined) return found;
  found = false;
  visit(document, {
    Directive(node) {
      if (!node.arguments?.some((argument) => hasVariable(argument.value))) return false;
      found = true;
      return BREAK;
    },
  });
  readsVariables.set(document, found);
  return found;
}

function hasVariable(value: ValueNode): boolean {
  if (value.kind === Kind.VARIABLE) return true;
  if (value.kind === Kind.LIST) return value.values.some(hasVariable);
  if (value.kind === Kind.OBJECT) return value.fields.some((field) => hasVariable(field.value));
  return false;
}

function badInput(message: string, node: DirectiveNode): GraphQLError {
  return createGraphQLError(message, { nodes: node, extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } } });
}

/** The first directive of the executed document whose arguments, with the operation's variables, cannot run. */
function refusal(args: ExecutionArgs): GraphQLError | undefined {
  if (!directivesReadVariables(args.document)) return undefined;
  const operation = getOperationAST(args.document, args.operationName);
  if (!operation) return undefined; // Execution reports it, running nothing.
  const coerced = getVariableValues(args.schema, operation.variableDefinitions ?? [], (args.variableValues ?? {}) as Record<string, unknown>, {
    maxErrors: 1,
  });
  if (coerced.errors) return undefined; // Likewise: invalid variables run nothing.
  let refused: GraphQLError | undefined;
  // The chosen operation and the fragments it reaches, as the executor runs them: a fragment only another operation
  // uses reads variables this one does not declare, and is not refused for them.
  const reached = operation.name ? (separateOperations(args.document)[operation.name.value] ?? args.document) : args.document;
  visit(reached, {
    Directive(node) {
      if (!node.arguments?.some((argument) => hasVariable(argument.value))) return false;
      const definition = args.schema.getDirective(node.name.value);
      if (!definition) return false; // Unknown directives are validation's to report.
      try {
        const values = getDirectiveValues(definition, { directives: [node] }, coerced.coerced);
        if (node.name.value === STREAM && values && INITIAL_COUNT in values && negativeCount(values[INITIAL_COUNT])) {
          refused = badInput(countMessage(String(values[INITIAL_COUNT])), node);
        }
      } catch (error) {
        if (!(error instanceof GraphQLError)) throw error;
        refused = badInput(error.message, node);
      }
      return refused ? BREAK : false;
    },
  });
  return refused;
}

/** The validation rule, and the check of variables in directives before execution (and before the cost walk). */
export function directiveArgumentsPlugin(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(StreamInitialCountRule);
    },
    onExecute({ args, setResultAndStopExecution }) {
      const refused = refusal(args);
      if (refused) setResultAndStopExecution({ errors: [refused] });
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const refused = refusal(args);
      if (refused) setResultAndStopExecution({ errors: [refused] });
    },
  };
}
