// The one table of application errors: stable five-digit code, HTTP status and GraphQL code for each (a new kind is
// one row), and the GraphQL codes that have no HTTP kind. errors/to-app-error.ts translates every source into a kind;
// rest/error-envelope.ts and graphql/transports/errors.ts render it.

/** A field that failed validation, as reported in `errors[]` (REST) and `extensions.fields` (GraphQL). */
export interface FieldError {
  field: string;
  message: string;
}

export interface ErrorKind {
  /** Five-digit application code: HTTP status × 100 + detail. */
  code: number;
  status: number;
  /** `extensions.code` when the error surfaces through GraphQL. */
  graphqlCode: string;
  message: string;
  /** `extensions.reason` on GraphQL: a finer reason within `graphqlCode` a client can act on. */
  reason?: string;
  /** A 5xx that is the deployment's configuration, not a fault: logged as a warning, not an error. */
  logAs?: 'warn';
}

export const ErrorKinds = {
  // 4xx: the client's request
  BAD_REQUEST: { code: 40000, status: 400, graphqlCode: 'BAD_USER_INPUT', message: 'Bad request' },
  BAD_QUERY_PARAMETER: { code: 40001, status: 400, graphqlCode: 'BAD_USER_INPUT', message: 'Bad query parameter' },
  // One answer for a reset or verification token that is unknown, used, expired, superseded or for another purpose.
  INVALID_TOKEN: { code: 40002, status: 400, graphqlCode: 'BAD_USER_INPUT', message: 'This link is invalid or has expired; ask for a new one' },
  UNAUTHENTICATED: { code: 40100, status: 401, graphqlCode: 'UNAUTHENTICATED', message: 'Authentication required' },
  FORBIDDEN: { code: 40300, status: 403, graphqlCode: 'FORBIDDEN', message: 'Forbidden' },
  REAUTHENTICATION_REQUIRED: {
    code: 40301,
    status: 403,
    graphqlCode: 'FORBIDDEN',
    message: 'This change needs a recent login: log in again, then retry',
    reason: 'REAUTHENTICATION_REQUIRED',
  },
  NOT_FOUND: { code: 40400, status: 404, graphqlCode: 'NOT_FOUND', message: 'Not found' },
  METHOD_NOT_ALLOWED: { code: 40500, status: 405, graphqlCode: 'BAD_USER_INPUT', message: 'Method not allowed' },
  NOT_ACCEPTABLE: { code: 40600, status: 406, graphqlCode: 'BAD_USER_INPUT', message: 'Not acceptable' },
  REQUEST_TIMEOUT: { code: 40800, status: 408, graphqlCode: 'BAD_USER_INPUT', message: 'Request timeout' },
  CONFLICT: { code: 40900, status: 409, graphqlCode: 'CONFLICT', message: 'Conflict' },
  IDEMPOTENCY_KEY_IN_USE: { code: 40901, status: 409, graphqlCode: 'CONFLICT', message: 'Idempotency-Key in use' },
  LAST_ADMIN: { code: 40902, status: 409, graphqlCode: 'CONFLICT', message: 'The last ADMIN cannot be demoted or deleted' },
  PRECONDITION_FAILED: { code: 41200, status: 412, graphqlCode: 'CONFLICT', message: 'Precondition failed' },
  PAYLOAD_TOO_LARGE: { code: 41300, status: 413, graphqlCode: 'BAD_USER_INPUT', message: 'Payload too large' },
  URI_TOO_LONG: { code: 41400, status: 414, graphqlCode: 'BAD_USER_INPUT', message: 'URI too long' },
  UNSUPPORTED_MEDIA_TYPE: { code: 41500, status: 415, graphqlCode: 'BAD_USER_INPUT', message: 'Unsupported media type' },
  VALIDATION_FAILED: { code: 42200, status: 422, graphqlCode: 'BAD_USER_INPUT', message: 'Validation failed' },
  PRECONDITION_REQUIRED: { code: 42800, status: 428, graphqlCode: 'BAD_USER_INPUT', message: 'Precondition required' },
  RATE_LIMITED: { code: 42900, status: 429, graphqlCode: 'RATE_LIMITED', message: 'Too many requests' },
  HEADERS_TOO_LARGE: { code: 43100, status: 431, graphqlCode: 'BAD_USER_INPUT', message: 'Request header fields too large' },
  // 5xx: the server
  INTERNAL: { code: 50000, status: 500, graphqlCode: 'INTERNAL_SERVER_ERROR', message: 'Internal server error' },
  UNAVAILABLE: { code: 50300, status: 503, graphqlCode: 'INTERNAL_SERVER_ERROR', message: 'Service unavailable' },
  MAIL_NOT_CONFIGURED: {
    code: 50301,
    status: 503,
    graphqlCode: 'INTERNAL_SERVER_ERROR',
    message: 'This server cannot send mail (no SMTP_URL): ask its operator',
    reason: 'MAIL_NOT_CONFIGURED',
    logAs: 'warn',
  },
  // The mail outbox (or the asking client's share of it) is full: the request that would add a message is refused.
  MAIL_QUEUE_FULL: {
    code: 50302,
    status: 503,
    graphqlCode: 'INTERNAL_SERVER_ERROR',
    message: 'The mail outbox is full; retry later',
    reason: 'MAIL_QUEUE_FULL',
    logAs: 'warn',
  },
  // A store this request would add to is at its bound (SPEC §0.2, docs/bounds.md): refused rather than forgetting another's entry.
  STORE_FULL: {
    code: 50303,
    status: 503,
    graphqlCode: 'INTERNAL_SERVER_ERROR',
    message: 'The server holds as much of this as it may; retry later',
    reason: 'STORE_FULL',
    logAs: 'warn',
  },
} as const satisfies Record<string, ErrorKind>;

export type ErrorKindName = keyof typeof ErrorKinds;

/**
 * GraphQL's own refusals, which have no HTTP kind of the table: the work limits (QUERY_TOO_COMPLEX), graphql-js's
 * parse and validation failures, and the trusted documents' refusals (the first is Apollo's APQ code, on which its
 * clients send the document whole; the other two are Apollo Router's safelisting and Yoga's plugin's).
 */
export const GraphQLOnlyCodes = {
  QUERY_TOO_COMPLEX: 'QUERY_TOO_COMPLEX',
  GRAPHQL_PARSE_FAILED: 'GRAPHQL_PARSE_FAILED',
  GRAPHQL_VALIDATION_FAILED: 'GRAPHQL_VALIDATION_FAILED',
  PERSISTED_QUERY_NOT_FOUND: 'PERSISTED_QUERY_NOT_FOUND',
  PERSISTED_QUERY_NOT_IN_LIST: 'PERSISTED_QUERY_NOT_IN_LIST',
  PERSISTED_QUERY_ID_REQUIRED: 'PERSISTED_QUERY_ID_REQUIRED',
} as const;

/** Every `extensions.code` a GraphQL client may see (SPEC §2, and the ones above). */
export const GRAPHQL_CODES: ReadonlySet<string> = new Set<string>([
  ...Object.values(ErrorKinds).map((kind) => kind.graphqlCode),
  ...Object.values(GraphQLOnlyCodes),
]);

/** An expected failure: rendered as the error envelope (REST) or a coded GraphQL error. */
export class AppError extends Error {
  readonly kind: ErrorKind;
  readonly fields: FieldError[] | undefined;
  /** The row version a refused precondition found (412): REST answers it as the `ETag`, GraphQL in `extensions`. */
  readonly currentVersion: number | undefined;
  /** With it, the version of the row's private fields, when the refused precondition named the view that shows them. */
  readonly currentPrivateVersion: number | undefined;

  constructor(kind: ErrorKindName, message?: string, fields?: FieldError[], currentVersion?: number, currentPrivateVersion?: number) {
    const entry = ErrorKinds[kind];
    super(message ?? entry.message);
    this.name = 'AppError';
    this.kind = entry;
    this.fields = fields;
    this.currentVersion = currentVersion;
    this.currentPrivateVersion = currentPrivateVersion;
  }

  get status(): number {
    return this.kind.status;
  }
}

/**
 * `text` cut to at most `max` UTF-16 units, an ellipsis marking the cut (never inside a surrogate pair): error
 * messages echo what clients sent, and the contract bounds them (`message` 500, `field` 256).
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1; // a high surrogate whose pair would be cut off
  return `${text.slice(0, end)}…`;
}

/** The contract's bounds on an error envelope's strings (ErrorEnvelope, FieldError), generated by `pnpm codegen`. */
export { ERROR_MESSAGE_MAX as MESSAGE_MAX, ERROR_FIELD_MAX as FIELD_MAX } from '@users-posts/contracts';

export const notFound = (what: string): AppError => new AppError('NOT_FOUND', `${what} not found`);
export const validationFailed = (fields: FieldError[]): AppError => new AppError('VALIDATION_FAILED', 'Validation failed', fields);
