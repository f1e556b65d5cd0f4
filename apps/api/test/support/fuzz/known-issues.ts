// Bugs the fuzz found whose fix belongs in files owned elsewhere (app.ts, plugins/graphql.ts): each matched narrowly, until fixed.
import type { HttpResult } from './http.js';

export interface KnownIssue {
  description: string;
  matches: (response: HttpResult) => boolean;
}

const fastifyBody = (response: HttpResult, code: string) => {
  try {
    return (JSON.parse(response.text) as { code?: unknown }).code === code;
  } catch {
    return false;
  }
};

export const KNOWN_ISSUES: KnownIssue[] = [
  {
    // Fix: `frameworkErrors: (error, request, reply) => reply.send(error)` in the Fastify options of app.ts, so these go
    // through the error handler (FST_ERR_BAD_URL is a 400, FST_ERR_MAX_PARAM_LENGTH a 414; both need a row in errors.ts).
    description: "a path with a bad %-escape (FST_ERR_BAD_URL) or a parameter over 100 characters (FST_ERR_MAX_PARAM_LENGTH) gets Fastify's own body, not the envelope",
    matches: (response) => (response.status === 400 && fastifyBody(response, 'FST_ERR_BAD_URL')) || (response.status === 414 && fastifyBody(response, 'FST_ERR_MAX_PARAM_LENGTH')),
  },
  {
    // Fix: a `clientErrorHandler` in the Fastify options of app.ts that writes the envelope (`{code: 43100, message}`;
    // a row in errors.ts) on the raw socket, as Fastify's default handler does with its own body.
    description: "a request whose headers (URL included) exceed Node's 16 KiB gets 431 with Fastify's own body, not the envelope",
    matches: (response) => response.status === 431 && response.text.includes('"statusCode":431'),
  },
  {
    // Fix in plugins/graphql.ts: when Yoga's response has no body (its 406 and 415), send
    // `{errors: [{message: 'Not acceptable' | 'Unsupported media type', extensions: {code: 'BAD_USER_INPUT'}}]}` as JSON
    // instead of `reply.send(response.body)` with a null body.
    description: '/graphql with an Accept or a Content-Type it cannot serve answers 406 or 415 with no GraphQL body (empty, or the JSON `null`)',
    matches: (response) => (response.status === 406 || response.status === 415) && (response.text === 'null' || response.text === ''),
  },
];

/** The known issue `response` is an instance of, if any. */
export const knownIssue = (response: HttpResult): KnownIssue | undefined => KNOWN_ISSUES.find((issue) => issue.matches(response));
