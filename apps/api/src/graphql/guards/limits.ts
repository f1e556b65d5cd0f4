// Abuse limits of SPEC §2 with graphql-armor (every limit explicit: armor's defaults differ), as Yoga plugins.
import { EnvelopArmor } from '@escape.tech/graphql-armor';
import type { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { workLimitPlugin } from './budget.js';
import { directiveArgumentsPlugin } from './directive-arguments.js';
import { nestingLimitPlugin } from './nesting.js';
import type { GraphQLLimits } from '../../config/config.js';
import { GraphQLOnlyCodes } from '../../errors/app-error.js';

export const DEFAULT_GRAPHQL_LIMITS: GraphQLLimits = {
  maxDepth: 10,
  maxAliases: 15,
  maxCost: 5000,
  maxTokens: 2000,
  maxDirectives: 50,
  maxBatch: 10,
  maxNodes: 50_000,
  maxExecutionMs: 10_000,
};

/** Every armor rejection carries one stable code clients can branch on, and is a 400 like any invalid document. */
function markTooComplex(_context: unknown, error: GraphQLError): void {
  Object.assign(error.extensions, { code: GraphQLOnlyCodes.QUERY_TOO_COMPLEX, http: { status: 400 } });
}

/**
 * The armor plugins (they run in parse/validate) and the work limits (cost with list sizes and variables, over the
 * whole request, and the run-time budget: budget.ts); all apply to every transport that uses Yoga's envelop.
 */
export function limitPlugins(limits: GraphQLLimits): Plugin[] {
  const onReject = [markTooComplex];
  const armor = new EnvelopArmor({
    maxDepth: { n: limits.maxDepth, onReject },
    maxAliases: { n: limits.maxAliases, onReject },
    // Armor's cost multiplies only by literal first/last and sees neither variables nor batches: budget.ts counts it.
    costLimit: { enabled: false },
    maxTokens: { n: limits.maxTokens, onReject },
    maxDirectives: { n: limits.maxDirectives, onReject },
    // Introspection and GraphiQL stay on (clients rely on them), so field suggestions are no secret.
    blockFieldSuggestion: { enabled: false },
  });
  // The nesting guard last: its parse wraps armor's (graphql/guards/nesting.ts), so it runs before any recursive parse.
  // Directive arguments before the work limit: the cost walk reads @skip/@include/@defer with the variables it refuses.
  return [...(armor.protect().plugins as Plugin[]), nestingLimitPlugin(), directiveArgumentsPlugin(), workLimitPlugin(limits)];
}
