// A document nested deeper than MAX_NESTING brackets (`{`, `[`, `(`) is refused before graphql-js parses it: its parser
// is recursive, and `{ user(id: [[[…5,000 levels…]]]) { id } }` (10 KB, under the token limit's reach: the stack runs
// out first) overflowed it, answering INTERNAL_SERVER_ERROR with two stack traces in the log (issue 31, item 4).
// The depth is measured with graphql-js's own Lexer (iterative; strings, block strings and comments lexed as the parser
// will), so nothing here re-implements GraphQL's grammar.
import { GraphQLError, Lexer, Source, TokenKind } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { GraphQLOnlyCodes } from '../../errors/app-error.js';

/** Far beyond any real document (selections are limited to depth 10; list values rarely nest past 3), far below a stack's reach. */
export const MAX_NESTING = 64;

const OPENERS = new Set<string>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L]);
const CLOSERS = new Set<string>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R]);

function tooDeep(): GraphQLError {
  return new GraphQLError(`Syntax Error: Brackets nested deeper than ${MAX_NESTING} levels.`, {
    extensions: { code: GraphQLOnlyCodes.QUERY_TOO_COMPLEX, http: { status: 400 } },
  });
}

/** Throws QUERY_TOO_COMPLEX when `source` nests brackets deeper than MAX_NESTING; a lexing error is left to the parser. */
export function assertNesting(source: string | Source): void {
  const lexer = new Lexer(typeof source === 'string' ? new Source(source) : source);
  let depth = 0;
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      if (OPENERS.has(token.kind) && ++depth > MAX_NESTING) throw tooDeep();
      if (CLOSERS.has(token.kind)) depth--;
    }
  } catch (error) {
    if (error instanceof GraphQLError && error.extensions.code === GraphQLOnlyCodes.QUERY_TOO_COMPLEX) throw error;
    // A syntax error: the parser reports it, with its own words and location.
  }
}

/** The guard as a Yoga plugin: it wraps whatever parse function the plugins before it set (armor's token limit). */
export function nestingLimitPlugin(): Plugin {
  return {
    onParse({ parseFn, setParseFn }) {
      setParseFn((source, options) => {
        assertNesting(source);
        return parseFn(source, options);
      });
    },
  };
}
