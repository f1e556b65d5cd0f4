// The static cost of an operation (SPEC §2 "the work of one request is bounded"): list sizes multiplied down the nesting.
//
// Written by hand: graphql-armor's costLimit multiplies only by literal `first`/`last`-like arguments and ignores
// variables and lists without arguments; graphql-query-complexity walks fragments without merging fields, so a
// document that spreads one fragment many times is counted (and walked) many times. Here the fields are collected
// exactly as Yoga's executor (@graphql-tools/executor) collects them (merged by response key, @skip/@include applied
// with the operation's variables, each fragment once per selection set, and each `@defer`red fragment apart: the
// executor runs every deferred fragment on its own, identical copies included), so the cost is the cost of what runs.
import {
  getDirectiveValues,
  getNamedType,
  getNullableType,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  isListType,
  isAbstractType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  Kind,
  SchemaMetaFieldDef,
  typeFromAST,
  TypeMetaFieldDef,
  valueFromAST,
  visit,
  BREAK,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLDirective,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  type InlineFragmentNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

/**
 * The size the cost limit assumes for a list field without a `limit` argument (documented in schema.graphql): the
 * expected size on ordinary data, not the maximum. The run-time budget (budget.ts) bounds what a larger database
 * makes of it.
 */
export const LIST_ESTIMATES: Readonly<Record<string, number>> = {
  'Query.users': 100,
  'Query.posts': 100,
  'User.posts': 5,
};

/** Arguments that give a list field's size when present (the schema's page-size arguments). */
const SIZE_ARGUMENTS = ['limit', 'first'] as const;

/** Stops the walk of an absurd document early: past the limit, the exact cost no longer matters. */
class CostExceeded extends Error {}

export interface CostInput {
  schema: GraphQLSchema;
  fragments: Record<string, FragmentDefinitionNode>;
  operation: OperationDefinitionNode;
  /** Coerced variable values of the operation. */
  variables: Record<string, unknown>;
  /** Stop counting once this is exceeded (the answer is then some number above it). */
  ceiling: number;
}

/**
 * Introspection lists have no size argument; their size is the schema's own, known up front. A list on `__Type` is
 * counted by its total over the schema divided by the number of types (so `types × fields` estimates the schema's
 * real number of fields, not every type having as many as the largest), rounded up: GraphiQL's full introspection
 * query stays well under the limit, while aliased or repeated `__schema` selections add up like any list.
 */
function introspectionEstimates(schema: GraphQLSchema): Record<string, number> {
  const types = Object.values(schema.getTypeMap());
  const directives = schema.getDirectives();
  const perType = (count: (type: (typeof types)[number]) => number) => Math.max(1, Math.ceil(sum(types.map(count)) / types.length));
  const fields = types.flatMap((type) => (isObjectType(type) || isInterfaceType(type) ? Object.values(type.getFields()) : []));
  return {
    '__Schema.types': types.length,
    '__Schema.directives': directives.length,
    '__Type.fields': perType((type) => (isObjectType(type) || isInterfaceType(type) ? Object.keys(type.getFields()).length : 0)),
    '__Type.inputFields': perType((type) => (isInputObjectType(type) ? Object.keys(type.getFields()).length : 0)),
    '__Type.enumValues': perType((type) => (isEnumType(type) ? type.getValues().length : 0)),
    '__Type.interfaces': perType((type) => (isObjectType(type) || isInterfaceType(type) ? type.getInterfaces().length : 0)),
    '__Type.possibleTypes': perType((type) => (isAbstractType(type) ? schema.getPossibleTypes(type).length : 0)),
    '__Field.args': Math.max(1, Math.ceil(sum(fields.map((field) => field.args.length)) / Math.max(1, fields.length))),
    '__Directive.args': Math.max(1, Math.ceil(sum(directives.map((directive) => directive.args.length)) / Math.max(1, directives.length))),
  };
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

const estimatesBySchema = new WeakMap<GraphQLSchema, Record<string, number>>();

function estimatesOf(schema: GraphQLSchema): Record<string, number> {
  let estimates = estimatesBySchema.get(schema);
  if (!estimates) {
    estimates = { ...introspectionEstimates(schema), ...LIST_ESTIMATES };
    estimatesBySchema.set(schema, estimates);
  }
  return estimates;
}

/**
 * How many items a list (or connection) field is counted as: its size argument when given, else the documented
 * estimate. Only the size arguments are read (documentOperationCost relies on it: no other argument changes a cost).
 */
function listSize(parent: GraphQLObjectType, field: GraphQLField<unknown, unknown>, node: FieldNode, input: CostInput): number {
  for (const name of SIZE_ARGUMENTS) {
    const definition = field.args.find((arg) => arg.name === name);
    if (!definition) continue;
    const given = node.arguments?.find((argument) => argument.name.value === name);
    // An invalid value fails execution of this field anyway (undefined here): it counts as the default meanwhile.
    // An explicit null takes the argument's default too, as the resolvers do (`recentPosts(limit: null)` returns 10).
    const value = (given && valueFromAST(given.value, definition.type, input.variables)) ?? definition.defaultValue;
    if (typeof value === 'number' && Number.isFinite(value) && value > 0) return Math.ceil(value);
  }
  return estimatesOf(input.schema)[`${parent.name}.${field.name}`] ?? 1;
}

/** What a walk may still visit (`left`, from the ceiling down) and what it has visited. */
interface WalkBudget {
  left: number;
  visited: number;
}

/** The fields one selection runs on an object, as the executor collects them: merged by response key, and apart from
 * them each deferred fragment's own fields (each is executed on its own, once per object, however alike). */
interface Collected {
  fields: Map<string, FieldNode[]>;
  deferred: Map<string, FieldNode[]>[];
}

/**
 * @graphql-tools/utils' collectFields (what @graphql-tools/executor 2 runs), step for step: a spread already visited is
 * skipped unless deferred; a deferred fragment (inline or spread, `@defer` without `if: false`) collects into a field
 * map of its own and its nested deferred fragments are listed beside it. Each deferred fragment found takes one from
 * the walk's budget (it costs at least 1, see selectionCost): chains of fragments spread twice with @defer grow
 * exponentially, and stop here at the ceiling instead.
 */
function collect(input: CostInput, type: GraphQLObjectType, selectionSets: readonly (SelectionSetNode | undefined)[], budget: WalkBudget): Collected {
  // bound: per call (one document, GRAPHQL_MAX_TOKENS)
  const collected: Collected = { fields: new Map(), deferred: [] };
  // bound: per call (one document, GRAPHQL_MAX_TOKENS)
  const visited = new Set<string>();
  for (const selectionSet of selectionSets)
    if (selectionSet) collectInto(input, type, selectionSet, collected.fields, collected.deferred, visited, budget);
  return collected;
}

function collectInto(
  input: CostInput,
  type: GraphQLObjectType,
  selectionSet: SelectionSetNode,
  fields: Map<string, FieldNode[]>,
  deferred: Map<string, FieldNode[]>[],
  visited: Set<string>,
  budget: WalkBudget,
): void {
  for (const selection of selectionSet.selections) {
    if (!included(input, selection)) continue;
    if (selection.kind === Kind.FIELD) {
      const key = selection.alias?.value ?? selection.name.value;
      const nodes = fields.get(key);
      if (nodes) nodes.push(selection);
      else fields.set(key, [selection]);
      continue;
    }
    const isDeferred = deferredHere(input, selection);
    if (selection.kind === Kind.FRAGMENT_SPREAD && !isDeferred && visited.has(selection.name.value)) continue;
    const fragment: FragmentDefinitionNode | InlineFragmentNode | undefined =
      selection.kind === Kind.FRAGMENT_SPREAD ? input.fragments[selection.name.value] : selection;
    if (!fragment || !conditionMatches(input.schema, fragment.typeCondition, type)) continue;
    if (!isDeferred) {
      if (fragment.kind === Kind.FRAGMENT_DEFINITION) visited.add(fragment.name.value);
      collectInto(input, type, fragment.selectionSet, fields, deferred, visited, budget);
      continue;
    }
    budget.visited++;
    if (--budget.left < 0) throw new CostExceeded();
    const own = new Map<string, FieldNode[]>();
    collectInto(input, type, fragment.selectionSet, own, deferred, visited, budget);
    deferred.push(own);
  }
}

type Selection = SelectionSetNode['selections'][number];

/** @skip and @include with the operation's variables (the directive guard has refused values that do not coerce). */
function included(input: CostInput, node: Selection): boolean {
  if (!node.directives?.length) return true;
  if (getDirectiveValues(GraphQLSkipDirective, node, input.variables)?.['if'] === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, node, input.variables)?.['if'] !== false;
}

function deferredHere(input: CostInput, node: Selection): boolean {
  if (!node.directives?.length) return false;
  const defer: GraphQLDirective | null | undefined = input.schema.getDirective('defer');
  const values = defer && getDirectiveValues(defer, node, input.variables);
  return values !== undefined && values !== null && values['if'] !== false;
}

function conditionMatches(schema: GraphQLSchema, condition: FragmentDefinitionNode['typeCondition'] | undefined, type: GraphQLObjectType): boolean {
  if (!condition) return true;
  const conditional = typeFromAST(schema, condition);
  if (conditional === type) return true;
  return conditional !== undefined && isAbstractType(conditional) && schema.isSubType(conditional, type);
}

/**
 * Cost of what a selection runs on one `type` object: its fields, and each deferred fragment again in full, plus 1 of
 * its own (a separate execution and a part of the answer) even when it holds only scalars.
 */
function selectionCost(type: GraphQLObjectType, collected: Collected, input: CostInput, budget: WalkBudget): number {
  let total = fieldsCost(type, collected.fields, input, budget);
  for (const fields of collected.deferred) {
    total += 1 + fieldsCost(type, fields, input, budget);
    if (total > input.ceiling) throw new CostExceeded();
  }
  return total;
}

/** Cost of the fields collected on `type`: each object or list field costs size × (1 + the cost of its selection). */
function fieldsCost(type: GraphQLObjectType, fields: Map<string, readonly FieldNode[]>, input: CostInput, budget: WalkBudget): number {
  let total = 0;
  for (const nodes of fields.values()) {
    const node = nodes[0]!;
    const field =
      node.name.value === '__typename' ? undefined : (type.getFields()[node.name.value] ?? schemaField(input.schema, type, node.name.value));
    if (!field) continue; // Unknown fields are validation's to report; they run nothing.
    const returned = getNullableType(field.type);
    const named = getNamedType(field.type);
    if (!isObjectType(named)) continue; // Scalars and enums are part of their object's cost.
    // A size argument counts on a connection too (`postsConnection(first)` sizes its `edges`): conservative.
    const size =
      isListType(returned) || field.args.some((arg) => SIZE_ARGUMENTS.includes(arg.name as never)) ? listSize(type, field, node, input) : 1;
    // Each visited field (but introspection's single objects) adds at least 1 to the cost, so more visits than the
    // ceiling mean a cost above it (or an absurd document): this bounds the walk itself, whatever fragments do.
    budget.visited++;
    if (--budget.left < 0) throw new CostExceeded();
    const inner = selectionCost(
      named,
      collect(
        input,
        named,
        nodes.map((each) => each.selectionSet),
        budget,
      ),
      input,
      budget,
    );
    // A single object inside introspection (`type`, `ofType` chains) adds nothing of its own: introspection's size is
    // the schema's, carried by its lists; counting each link of GraphiQL's 8-deep `ofType` chains would triple its cost.
    const own = !isListType(returned) && type.name.startsWith('__') ? 0 : 1;
    total += size * (own + inner);
    if (total > input.ceiling) throw new CostExceeded();
  }
  return total;
}

/** `__schema` and `__type` are not among the root type's fields. */
function schemaField(schema: GraphQLSchema, type: GraphQLObjectType, name: string): GraphQLField<unknown, unknown> | undefined {
  if (type !== schema.getQueryType()) return undefined;
  return name === SchemaMetaFieldDef.name ? SchemaMetaFieldDef : name === TypeMetaFieldDef.name ? TypeMetaFieldDef : undefined;
}

/** Directives whose arguments decide what runs: a variable in them changes the cost. */
const COST_DIRECTIVES = new Set(['skip', 'include', 'defer']);

/**
 * Whether a variable can change the cost of an operation of `document`: only through a size argument (`limit: $n`,
 * also inside a list or object value) or an `@skip`/`@include`/`@defer` condition. Any other variable (`user(id: $id)`) is
 * read by the resolvers, not by the walk.
 */
function variablesCanChangeCost(document: DocumentNode): boolean {
  let found = false;
  const readsVariable = (node: object) => {
    let reads = false;
    visit(node as DocumentNode, {
      Variable() {
        reads = true;
        return BREAK;
      },
    });
    return reads;
  };
  visit(document, {
    Argument(node) {
      if (SIZE_ARGUMENTS.includes(node.name.value as never) && readsVariable(node.value)) {
        found = true;
        return BREAK;
      }
      return undefined;
    },
    Directive(node) {
      if (COST_DIRECTIVES.has(node.name.value) && readsVariable(node)) {
        found = true;
        return BREAK;
      }
      return undefined;
    },
  });
  return found;
}

const variablesChangeCost = new WeakMap<DocumentNode, boolean>();
/** A finished walk: its cost, and its bound (the larger of the cost and the fields visited, see selectionCost). */
const walkByOperation = new WeakMap<OperationDefinitionNode, { schema: GraphQLSchema; document: DocumentNode; cost: number; bound: number }>();

/**
 * operationCost, remembered per operation of a document whose variables cannot change it (most documents, e.g. a
 * query by id): Yoga's parser cache hands the same DocumentNode for the same text, so a repeated query is walked once.
 * The answer is the one operationCost gives: a walk under a lower ceiling stops (`Infinity`) exactly when the ceiling
 * is below the cost or below the fields it visits, so both are kept.
 */
export function documentOperationCost(input: CostInput & { document: DocumentNode }): number {
  let variablesMatter = variablesChangeCost.get(input.document);
  if (variablesMatter === undefined) {
    variablesMatter = variablesCanChangeCost(input.document);
    variablesChangeCost.set(input.document, variablesMatter);
  }
  if (variablesMatter) return operationCost(input);
  let walked = walkByOperation.get(input.operation);
  // The fragments are the document's, the field definitions the schema's: both must be the ones it was walked with.
  if (walked?.schema !== input.schema || walked.document !== input.document) {
    const result = walk(input);
    if (!result) return Number.POSITIVE_INFINITY; // stopped: its bound is not known
    walked = { schema: input.schema, document: input.document, ...result };
    walkByOperation.set(input.operation, walked);
  }
  return walked.bound > input.ceiling ? Number.POSITIVE_INFINITY : walked.cost;
}

/** The operation's cost, or `Infinity` once it passes `ceiling` (the walk stops there). */
export function operationCost(input: CostInput): number {
  return walk(input)?.cost ?? Number.POSITIVE_INFINITY;
}

/** The cost and bound of a walk that finished under `ceiling`; undefined where it stopped. */
function walk(input: CostInput): { cost: number; bound: number } | undefined {
  const root =
    input.operation.operation === 'query'
      ? input.schema.getQueryType()
      : input.operation.operation === 'mutation'
        ? input.schema.getMutationType()
        : input.schema.getSubscriptionType();
  if (!root) return { cost: 0, bound: 0 };
  const budget: WalkBudget = { left: input.ceiling, visited: 0 };
  try {
    const cost = selectionCost(root, collect(input, root, [input.operation.selectionSet], budget), input, budget);
    return { cost, bound: Math.max(cost, budget.visited) };
  } catch (error) {
    if (error instanceof CostExceeded) return undefined;
    throw error;
  }
}
