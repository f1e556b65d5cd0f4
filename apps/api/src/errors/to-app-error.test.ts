// The error pipeline's translation: every source a failure comes from lands on one row of the table, or on none (a bug).
import { describe, expect, it } from '@jest/globals';
import { GraphQLError } from 'graphql';
import { AppError, ErrorKinds, GRAPHQL_CODES, GraphQLOnlyCodes } from './app-error.js';
import { toAppError } from './to-app-error.js';

/** An error as Fastify or a driver builds it: a message and the properties it sets. */
const failure = (message: string, properties: Record<string, unknown>): Error => Object.assign(new Error(message), properties);

describe('toAppError', () => {
  it('keeps an AppError, also when GraphQL wrapped it (twice)', () => {
    const original = new AppError('FORBIDDEN', 'Only the author may edit this post');
    expect(toAppError(original)).toBe(original);
    const wrapped = new GraphQLError('wrapped', { originalError: new GraphQLError('again', { originalError: original }) });
    expect(toAppError(wrapped)).toBe(original);
  });

  it('turns Ajv failures of a body into 422 and of a query string into 400, naming each field', () => {
    const validation = [
      {
        keyword: 'required',
        instancePath: '',
        schemaPath: '#/required',
        params: { missingProperty: 'email' },
        message: "must have required property 'email'",
      },
      { keyword: 'maximum', instancePath: '/age', schemaPath: '#/properties/age/maximum', params: { limit: 150 }, message: 'must be <= 150' },
    ];
    const body = toAppError(failure('body/email', { validation, validationContext: 'body', statusCode: 400 }));
    expect(body).toMatchObject({
      kind: ErrorKinds.VALIDATION_FAILED,
      fields: [
        { field: 'email', message: 'is required' },
        { field: 'age', message: 'must be <= 150' },
      ],
    });
    const query = toAppError(failure('querystring/age', { validation: validation.slice(1), validationContext: 'querystring', statusCode: 400 }));
    expect(query).toMatchObject({ kind: ErrorKinds.BAD_QUERY_PARAMETER, message: 'Invalid age' });
  });

  it.each([
    ['FST_ERR_CTP_BODY_TOO_LARGE', ErrorKinds.PAYLOAD_TOO_LARGE],
    ['FST_ERR_CTP_INVALID_MEDIA_TYPE', ErrorKinds.UNSUPPORTED_MEDIA_TYPE],
    ['FST_ERR_CTP_INVALID_JSON_BODY', ErrorKinds.BAD_REQUEST],
    ['FST_ERR_BAD_URL', ErrorKinds.BAD_REQUEST],
    ['FST_ERR_MAX_PARAM_LENGTH', ErrorKinds.URI_TOO_LONG],
    ['HPE_HEADER_OVERFLOW', ErrorKinds.HEADERS_TOO_LARGE],
    ['ERR_HTTP_REQUEST_TIMEOUT', ErrorKinds.REQUEST_TIMEOUT],
  ])('maps the framework code %s onto its kind', (code, kind) => {
    expect(toAppError(failure('framework', { code }))?.kind).toBe(kind);
  });

  it('says which part of the request was malformed', () => {
    expect(toAppError(failure('Unexpected end of JSON input', { code: 'FST_ERR_CTP_INVALID_JSON_BODY' }))?.message).toBe(
      'Malformed request body: Unexpected end of JSON input',
    );
    expect(toAppError(failure("'/%E0' is not a valid url component", { code: 'FST_ERR_BAD_URL' }))?.message).toMatch(/^Malformed URL: /);
  });

  it('maps Prisma codes any query can meet, and every shape of an unreachable database, to their kinds', () => {
    expect(toAppError(failure('Unique constraint failed', { code: 'P2002' }))?.kind).toBe(ErrorKinds.CONFLICT);
    expect(toAppError(failure('Record to update not found', { code: 'P2025' }))?.kind).toBe(ErrorKinds.NOT_FOUND);
    expect(toAppError(failure('Transaction API error', { code: 'P2028' }))).toMatchObject({
      kind: ErrorKinds.UNAVAILABLE,
      message: 'Database busy: try again',
    });
    for (const unreachable of [
      failure('connect ECONNREFUSED 127.0.0.1:5432', { code: 'ECONNREFUSED' }),
      failure('terminating connection', { code: '57P01' }),
      failure('Connection terminated unexpectedly', {}),
    ]) {
      expect(toAppError(unreachable)).toMatchObject({ kind: ErrorKinds.UNAVAILABLE, message: 'Database unavailable' });
    }
  });

  it('maps any other client status onto the table, and leaves everything else to be masked as a bug', () => {
    expect(toAppError(failure('Not Acceptable', { statusCode: 406 }))?.kind).toBe(ErrorKinds.NOT_ACCEPTABLE);
    expect(toAppError(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBeUndefined();
    expect(toAppError(failure('boom', { statusCode: 500 }))).toBeUndefined();
    expect(toAppError('a string thrown')).toBeUndefined();
  });
});

describe('the table', () => {
  it('gives every kind a unique five-digit code whose first three digits are its status', () => {
    const codes = Object.values(ErrorKinds).map((kind) => kind.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const kind of Object.values(ErrorKinds)) expect(Math.floor(kind.code / 100)).toBe(kind.status);
  });

  it('lists the GraphQL codes of SPEC §2, and the trusted documents’ refusals', () => {
    for (const code of [
      'UNAUTHENTICATED',
      'FORBIDDEN',
      'BAD_USER_INPUT',
      'NOT_FOUND',
      'CONFLICT',
      'RATE_LIMITED',
      'INTERNAL_SERVER_ERROR',
      ...Object.values(GraphQLOnlyCodes),
    ]) {
      expect(GRAPHQL_CODES.has(code)).toBe(true);
    }
  });
});
