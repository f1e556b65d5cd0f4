// The response properties the fuzz asserts: no 5xx, JSON bodies, the REST envelopes of SPEC §4, the GraphQL codes of SPEC §2.
import type { HttpResult } from './http.js';

/** SPEC §2. INTERNAL_SERVER_ERROR is documented, but for bad input it is a 500 in disguise, so the fuzz reports it. */
// SPEC §2's codes, and the persisted documents' refusals (graphql/guards/persisted-documents.ts), which a drawn APQ extension meets.
export const GRAPHQL_CODES = new Set([
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'BAD_USER_INPUT',
  'NOT_FOUND',
  'CONFLICT',
  'RATE_LIMITED',
  'QUERY_TOO_COMPLEX',
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_IN_LIST',
  'PERSISTED_QUERY_ID_REQUIRED',
]);

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

function parseJson(response: HttpResult): { body?: unknown; problems: string[] } {
  const contentType = response.headers['content-type'] ?? '';
  if (!/^application\/((graphql-response|vnd\.api\.v1)\+)?json/.test(contentType))
    return { problems: [`content-type is "${contentType}", not JSON`] };
  try {
    return { body: JSON.parse(response.text), problems: [] };
  } catch {
    return { problems: [`body is not JSON: ${response.text.slice(0, 200)}`] };
  }
}

const ERROR_KEYS = new Set(['code', 'message', 'errors', 'error']);

/** `{code: status × 100 + detail, message, errors?: [{field, message}]}`, plus `error` on 401 (SPEC §4). */
export function errorEnvelopeProblems(status: number, body: unknown, extraKeys: string[] = []): string[] {
  if (!isObject(body)) return [`error body is not an object: ${JSON.stringify(body)?.slice(0, 200)}`];
  const problems: string[] = [];
  if (typeof body.code !== 'number' || !Number.isInteger(body.code) || Math.floor(body.code / 100) !== status) {
    problems.push(`code ${JSON.stringify(body.code)} is not ${status}xx`);
  }
  if (typeof body.message !== 'string') problems.push('message is not a string');
  if (body.errors !== undefined) {
    const ok =
      Array.isArray(body.errors) &&
      body.errors.every((error) => isObject(error) && typeof error.field === 'string' && typeof error.message === 'string');
    if (!ok) problems.push(`errors is not [{field, message}]: ${JSON.stringify(body.errors).slice(0, 200)}`);
  }
  if (status === 401 && typeof body.error !== 'string') problems.push('a 401 without `error`');
  const unexpected = Object.keys(body).filter((key) => !ERROR_KEYS.has(key) && !extraKeys.includes(key));
  if (unexpected.length > 0) problems.push(`unexpected keys ${unexpected.join(', ')}`);
  return problems;
}

/** SPEC §3: a failed login is `{success: false, error}`; when it comes from the error handler it also has code and message. */
function loginFailureProblems(body: unknown): string[] {
  if (!isObject(body) || body.success !== false || typeof body.error !== 'string')
    return [`not a login failure: ${JSON.stringify(body)?.slice(0, 200)}`];
  return 'code' in body ? errorEnvelopeProblems(401, body, ['success']) : [];
}

/** Operations whose success bodies are documented as something other than envelope A. */
const OWN_SUCCESS_BODIES = new Set([
  'login',
  'refreshTokens',
  'oauthCallback',
  'getHealth',
  'getReadiness',
  'changePassword',
  'forgotPassword',
  'resendVerification',
]);

export function restProblems(operationId: string, method: string, response: HttpResult): string[] {
  if (response.status >= 500) return [`${response.status}: ${response.text.slice(0, 300)}`];
  if (method === 'HEAD' || response.status === 204 || response.status === 304 || (response.status >= 300 && response.status < 400)) {
    return method !== 'HEAD' && response.status === 204 && response.text !== '' ? [`204 with a body: ${response.text.slice(0, 200)}`] : [];
  }
  const { body, problems } = parseJson(response);
  if (problems.length > 0) return problems;
  if (response.status === 401 && operationId === 'login' && method === 'POST') return loginFailureProblems(body);
  if (response.status >= 400) return errorEnvelopeProblems(response.status, body);
  if (OWN_SUCCESS_BODIES.has(operationId)) return [];
  if (!isObject(body) || body.code !== 0 || typeof body.message !== 'string' || !('data' in body)) {
    return [`success body is not {code: 0, message, data}: ${response.text.slice(0, 200)}`];
  }
  return [];
}

/** A GraphQL answer: below 500, JSON, `data` and/or `errors`, every error with a message and a SPEC §2 code. */
export function graphqlProblems(response: HttpResult): string[] {
  if (response.status >= 500) return [`${response.status}: ${response.text.slice(0, 300)}`];
  // A subscription's live stream (multipart for `Accept: */*`, or SSE): its events are checked by the transport suites
  if (response.openStream) return response.status === 200 ? [] : [`a stream opened with ${response.status}`];
  const { body, problems } = parseJson(response);
  if (problems.length > 0) return problems;
  // Headers (URL included) over 16 KiB are refused by Node's HTTP parser before any route, GraphQL's included: the
  // answer is the documented error envelope (43100), since nothing yet knows the request was meant for GraphQL.
  if (response.status === 431) return errorEnvelopeProblems(response.status, body);
  const results = Array.isArray(body) ? body : [body];
  for (const result of results) {
    if (!isObject(result) || (!('data' in result) && !('errors' in result))) {
      problems.push(`not a GraphQL result: ${JSON.stringify(result)?.slice(0, 200)}`);
      continue;
    }
    for (const error of (result.errors ?? []) as unknown[]) {
      const code = isObject(error) && isObject(error.extensions) ? error.extensions.code : undefined;
      if (!isObject(error) || typeof error.message !== 'string' || typeof code !== 'string' || !GRAPHQL_CODES.has(code)) {
        problems.push(`error outside SPEC §2: ${JSON.stringify(error).slice(0, 300)}`);
      }
    }
  }
  return problems;
}
