// Refuses, as the client's error, a GET whose `variables` or `extensions` parameter is not JSON.
//
// Yoga's GET parser reads both with a bare JSON.parse: its SyntaxError reached error masking as an unexpected error,
// answered 200 "Unexpected error." with code INTERNAL_SERVER_ERROR, even under application/graphql-response+json
// (found by the fast path's differential corpus, graphql/fast-path.test.ts). GraphQL over HTTP: a request the server
// cannot parse is a 400. Written by hand: Yoga offers no option for it; its parser stays the one that reads the rest.
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { AppError } from '../../errors/app-error.js';
import { extensionsOf } from './errors.js';

/** The query-string parameters Yoga reads as JSON text. */
const JSON_PARAMETERS = ['variables', 'extensions'] as const;

/** The first of JSON_PARAMETERS in `url` that is present and not JSON, with why. */
function unparsableParameter(url: string): { name: string; reason: string } | undefined {
  const params = new URL(url).searchParams;
  for (const name of JSON_PARAMETERS) {
    const text = params.get(name);
    if (!text) continue;
    try {
      JSON.parse(text);
    } catch (error) {
      return { name, reason: error instanceof Error ? error.message : String(error) };
    }
  }
  return undefined;
}

export function queryStringJson(): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser }) {
      if (request.method !== 'GET' || !requestParser) return;
      setRequestParser(async (parsing) => {
        try {
          return await requestParser(parsing);
        } catch (error) {
          const bad = error instanceof SyntaxError ? unparsableParameter(parsing.url) : undefined;
          if (!bad) throw error;
          const message = `The ${bad.name} parameter is not JSON`;
          const refusal = new AppError('BAD_REQUEST', message, [{ field: bad.name, message: `must be JSON text (${bad.reason})` }]);
          throw createGraphQLError(message, { extensions: { ...extensionsOf(refusal), http: { status: 400 } } });
        }
      });
    },
  };
}
