// Reads the environment once, validates it, and returns the typed Config the app is built from.
import type { CollectionLimits } from './collection-limits.js';
import { Ajv } from 'ajv';
import path from 'node:path';
import { CONFIG_AJV_OPTIONS } from './config-schema.js';
import validateConfig from '../generated/config-validator.cjs';
import { parseOAuthProviders, type OAuthProviderConfig } from './oauth-config.js';
import { dataDirectories, repoRoot } from '../paths.js';
import { resolveSecrets, type Secrets } from './secrets.js';
import type { StoreBounds } from './store-bounds.js';

/** GraphQL abuse limits (SPEC §2), applied by graphql/guards/limits.ts and graphql/guards/budget.ts. */
export interface GraphQLLimits {
  maxDepth: number;
  maxAliases: number;
  maxCost: number;
  maxTokens: number;
  maxDirectives: number;
  /** Operations in one batched HTTP request. */
  maxBatch: number;
  /** Objects and list items one HTTP request (or one subscription event) may resolve (budget.ts). */
  maxNodes: number;
  /** Milliseconds one HTTP request (or one subscription event) may spend resolving (budget.ts). */
  maxExecutionMs: number;
}

/** Trusted documents (graphql/guards/persisted-documents.ts). */
export interface PersistedDocumentsConfig {
  /** `GRAPHQL_PERSISTED_DOCUMENTS`: the manifest (JSON) of the documents clients may send by hash. */
  file?: string | undefined;
  /** `GRAPHQL_TRUSTED_DOCUMENTS_ONLY`: only the manifest's documents run; a document sent as text is refused. */
  trustedOnly: boolean;
}

export interface Config {
  nodeEnv: 'development' | 'test' | 'production';
  host: string;
  port: number;
  logLevel: string;
  /** Where the embedded database and generated secrets live. */
  dataDir: string;
  pgliteDir: string;
  /** `PGLITE_WASM_TIER_UP`: V8 may optimise the embedded database's WebAssembly (default false: its memory peak, schema-engine-bridge/src/webassembly-tier.js). */
  pgliteWasmTierUp: boolean;
  /** PostgreSQL instead of the embedded PGlite when set. */
  databaseUrl: string | undefined;
  /** Apply migrations at start (always true for the embedded database). */
  migrateOnStart: boolean;
  /** Most PostgreSQL connections this instance opens at once (`DATABASE_POOL_MAX`, default 10). */
  databasePoolMax?: number | undefined;
  /** `DATABASE_PREPARED_STATEMENTS`: the hot reads are prepared by name on PostgreSQL (default true; false behind a PgBouncer that cannot keep them). */
  databasePreparedStatements: boolean;
  redisUrl: string | undefined;
  secrets: Secrets;
  /** GraphQL abuse limits (SPEC §2). */
  graphqlLimits: GraphQLLimits;
  /**
   * Plain JSON queries and mutations skip Yoga's fetch-API layer (graphql/acceleration/http-fast-path.ts); `GRAPHQL_FAST_PATH=false`
   * sends every request through Yoga's handler (same answers, more CPU per request).
   */
  graphqlFastPath: boolean;
  /**
   * Queries run compiled (graphql-jit) once executed `afterExecutions` times, graphql-js answering every one that has an
   * error (graphql/acceleration/compiled-execution.ts); `GRAPHQL_COMPILED_EXECUTION=false` runs every operation on graphql-js.
   */
  graphqlCompiledExecution: { afterExecutions: number; compileBurst?: number; compilesPerSecond?: number } | false;
  /** Internal error messages, stack traces and source paths in answers: only when `NODE_ENV=development` is set explicitly. */
  exposeErrors: boolean;
  /** The default rate-limit bucket (SPEC §4): `max` requests per `windowMs` per client (user id, else IP). */
  defaultRateLimit: { max: number; windowMs: number };
  /** The stricter buckets (SPEC §4). Login and refresh count per minute. */
  rateLimits: {
    /** `POST /login` per client address + e-mail (`LOGIN_RATE_LIMIT_MAX`). */
    loginMax: number;
    /** `POST /auth/refresh` per client address (`REFRESH_RATE_LIMIT_MAX`). */
    refreshMax: number;
    /** `POST /login` per client address across e-mails (`LOGIN_IP_RATE_LIMIT_MAX`). */
    loginIpMax: number;
    /** `POST /login` per e-mail across addresses, in its own window (`LOGIN_ACCOUNT_RATE_LIMIT_MAX`, `_WINDOW_MS`). */
    loginAccount: { max: number; windowMs: number };
    /** Accounts created per client (`SIGNUP_RATE_LIMIT_MAX`, `SIGNUP_RATE_LIMIT_WINDOW_MS`). */
    signup: { max: number; windowMs: number };
    /** The account lifecycle's (`FORGOT_EMAIL_…`, `FORGOT_IP_…`, `ACCOUNT_TOKEN_…`, `VERIFY_RESEND_RATE_LIMIT_MAX`). */
    forgotEmailMax: number;
    forgotIpMax: number;
    accountTokenMax: number;
    verifyResendMax: number;
  };
  /**
   * Fastify's `trustProxy` (`TRUST_PROXY`, off by default): true (every hop), a hop count, or a comma-separated list of
   * proxy addresses/CIDRs. When on, `request.ip` (and so every rate-limit key) is the client address of X-Forwarded-For.
   */
  trustProxy: boolean | number | string;
  /** A second presentation of a just-rotated refresh token within this many ms answers 409 instead of reuse (default 0: strict). */
  refreshReuseGraceMs: number;
  /** `GET /metrics`: with `token`, only for `Authorization: Bearer <token>`; with `port`, on that port only; neither: not served. */
  metrics: { token?: string | undefined; port?: number | undefined; host?: string | undefined };
  /**
   * HTTP server bounds against slow clients (slow-loris, readers that stop reading: `sendTimeoutMs` of a socket with
   * nothing moving) and connection floods (in all, and per client address; 0: no per-address cap).
   */
  http: { headersTimeoutMs: number; requestTimeoutMs: number; maxConnections: number; sendTimeoutMs: number; maxConnectionsPerAddress: number };
  /** Subscription caps (SPEC §2): per WebSocket connection, per client (user or address) and in total. */
  subscriptionLimits: {
    perConnection: number;
    perClient: number;
    total: number;
    /** How often open authenticated WebSockets re-verify their token (default 30 s; not an env setting, for tests). */
    reverifyIntervalMs?: number | undefined;
  };
  /** The administrator created or updated at start, when both are set. */
  admin: { email: string; password: string } | undefined;
  /** OpenID Connect providers (`OAUTH_<NAME>_*`), none by default. */
  oauthProviders: OAuthProviderConfig[];
  /** Origins allowed by CORS, with credentials (`CORS_ORIGINS`, comma-separated); none by default. */
  corsOrigins: string[];
  /** `REQUIRE_IF_MATCH`: PUT, PATCH and DELETE of one resource without `If-Match` are refused with 428 (RFC 6585). */
  requireIfMatch: boolean;
  /** Trusted documents (graphql/guards/persisted-documents.ts): the manifest clients send hashes of, and the allow-list mode. */
  persistedDocuments: PersistedDocumentsConfig;
  /** OpenTelemetry traces (plugins/tracing.ts), on with `OTEL_EXPORTER_OTLP_ENDPOINT`; off (nothing loaded) by default. */
  tracing?: { serviceName: string } | undefined;
  /** `IDEMPOTENCY_TTL_SECONDS`: how long the first answer to a keyed write is replayed to its retries (default 24 h). */
  idempotencyTtlSeconds: number;
  /** Mail of the account lifecycle (SPEC §3.2, mail/): how it leaves and where its links point. */
  mail: MailConfig;
  /** `RECENT_AUTH_MS`: how long after a login creating an API key or changing one's e-mail is allowed (default 10 min). */
  recentAuthMs: number;
  /** `GRAPHIQL`: GraphiQL at GET /graphql for browsers, and its assets under /graphiql/ (default true). */
  graphiql: boolean;
  /** `EXACT_COUNT_LIMIT` and `MAX_OFFSET` (SPEC §4 "At scale"): how exactly the listings count, how deep they page. */
  collections: CollectionLimits;
  /** Contract evolution at run time (SPEC §6): usage recording, and deprecations beyond the contract's. */
  contractUsage: ContractUsageConfig;
  /** The bounds of the stores a request can grow (SPEC §0.2, bounds/store-bounds.ts, docs/bounds.md). */
  storeBounds: StoreBounds;
}

export interface ContractUsageConfig {
  /** `CONTRACT_USAGE` (default true): count requests per operation, parameter, GraphQL field and client (plugins/contract-usage.ts). */
  enabled: boolean;
  /** How often the counts are added to the database (default 10 s; not an env setting). */
  flushIntervalMs?: number | undefined;
  // The record's bounds (SPEC §0.2); unset (a test's config), the schema's defaults (plugins/contract-usage.ts).
  /** `CONTRACT_USAGE_RETENTION_DAYS` (default 37): days of rows kept, today's included; older ones are deleted. */
  retentionDays?: number | undefined;
  /** `CONTRACT_USAGE_NEW_NAMES_PER_DAY` (default 1000): new client names, and new operation names, admitted a day. */
  newNamesPerDay?: number | undefined;
  /** `CONTRACT_USAGE_NEW_NAMES_PER_ADDRESS` (default 10): one client address's share of them. */
  newNamesPerAddress?: number | undefined;
  /** `CONTRACT_USAGE_ROWS_PER_DAY` (default 20 000): rows added to the table a day, every instance together. */
  rowsPerDay?: number | undefined;
  /** `CONTRACT_USAGE_ROWS_PER_ADDRESS` (default 1000): rows one client address may add a day. */
  rowsPerAddress?: number | undefined;
  /**
   * Deprecations added to those of openapi.yaml, by operationId (not an env setting: tests deprecate an operation or
   * a parameter without editing the contract). Dates as the contract writes them (`YYYY-MM-DD`).
   */
  deprecations?: Record<string, DeprecationOverride> | undefined;
}

/** What `deprecated: true` with `x-sunset` (and `x-deprecated-at`) says of an operation and of its parameters. */
export interface DeprecationOverride {
  operation?: DeprecationDates;
  parameters?: Record<string, DeprecationDates & { in: 'query' | 'header' }>;
}

export interface DeprecationDates {
  sunset: string;
  deprecatedAt?: string;
}

export interface MailConfig {
  /** `SMTP_URL` (`smtp://` or `smtps://`, credentials in the URL); without it, `.eml` files in `outboxDir` (not in production). */
  smtpUrl: string | undefined;
  /** `MAIL_FROM`: the From header. */
  from: string;
  /** `PUBLIC_URL`: what the links in mail start with (default `http://localhost:<PORT>`), without a trailing slash. */
  publicUrl: string;
  /**
   * `<DATA_DIR>/outbox`: where messages go without `SMTP_URL`, outside production. Neither (production without
   * `SMTP_URL`): mail is not configured, and what must send it answers 503 (SPEC §3.2).
   */
  outboxDir?: string | undefined;
  /** Waits before each retry of a failed delivery (not an env setting: tests shorten them). */
  retryDelaysMs?: readonly number[] | undefined;
  /** `SMTP_CONNECTION_TIMEOUT_MS`, `SMTP_GREETING_TIMEOUT_MS`, `SMTP_SOCKET_TIMEOUT_MS` (defaults 10 s, 10 s, 30 s). */
  smtpTimeouts?: SmtpTimeouts | undefined;
  /** The outbox's worker and bounds (`MAIL_CONCURRENCY`, `MAIL_QUEUE_MAX`, `MAIL_*_MAX_PER_HOUR`, `MAIL_SENDER_MAX_PENDING`, …); defaults in mail/outbox.ts. */
  outbox?: Partial<MailOutboxConfig> | undefined;
}

export interface SmtpTimeouts {
  /** To open the TCP (and TLS) connection. */
  connectionMs: number;
  /** From the connection to the server's 220 greeting. */
  greetingMs: number;
  /** Of silence on an open connection, at any later step (after EHLO, during DATA). */
  socketMs: number;
}

export interface MailOutboxConfig {
  /** Messages sent at once by this instance's worker. */
  concurrency: number;
  /** Most messages waiting in the outbox; beyond it the request that would add one is refused (503, MAIL_QUEUE_FULL). */
  queueMax: number;
  /** Most messages of one kind to one address per hour (every account and every sender together). */
  perRecipientPerHour: number;
  /** Most messages of one kind about one account per hour. */
  perAccountPerHour: number;
  /** `MAIL_SENDER_MAX_PENDING`: most messages waiting that one sender (a client address, an account) asked for. */
  senderMaxPending: number;
  /** `MAIL_PRIORITY_RESERVE`: room beyond `queueMax` that only the owner's security mail (trust links, change notices) may use. */
  priorityReserve: number;
  /** `MAIL_CLAIM_LEASE_MS`: how long a claimed message is its worker's (renewed while it is sent) before another may send it. */
  leaseMs: number;
}

interface RawEnv {
  NODE_ENV?: Config['nodeEnv'];
  HOST?: string;
  PORT: number;
  LOG_LEVEL: string;
  DATA_DIR: string;
  PGLITE_DIR?: string;
  PGLITE_WASM_TIER_UP: boolean;
  DATABASE_URL?: string;
  MIGRATE_ON_START: boolean;
  DATABASE_POOL_MAX: number;
  DATABASE_PREPARED_STATEMENTS: boolean;
  REDIS_URL?: string;
  RATE_LIMIT_MAX: number;
  RATE_LIMIT_WINDOW_MS: number;
  LOGIN_RATE_LIMIT_MAX: number;
  LOGIN_IP_RATE_LIMIT_MAX: number;
  LOGIN_ACCOUNT_RATE_LIMIT_MAX: number;
  LOGIN_ACCOUNT_RATE_LIMIT_WINDOW_MS: number;
  SIGNUP_RATE_LIMIT_MAX: number;
  SIGNUP_RATE_LIMIT_WINDOW_MS: number;
  TRUST_PROXY: string;
  REFRESH_REUSE_GRACE_MS: number;
  METRICS_TOKEN?: string;
  METRICS_PORT?: number;
  METRICS_HOST?: string;
  HTTP_HEADERS_TIMEOUT_MS: number;
  HTTP_REQUEST_TIMEOUT_MS: number;
  HTTP_MAX_CONNECTIONS: number;
  HTTP_MAX_CONNECTIONS_PER_ADDRESS?: number;
  HTTP_SEND_TIMEOUT_MS: number;
  SUBSCRIPTIONS_MAX_PER_CONNECTION: number;
  SUBSCRIPTIONS_MAX_PER_CLIENT: number;
  SUBSCRIPTIONS_MAX_TOTAL: number;
  GRAPHQL_MAX_DEPTH: number;
  GRAPHQL_MAX_ALIASES: number;
  GRAPHQL_MAX_COST: number;
  GRAPHQL_MAX_TOKENS: number;
  GRAPHQL_MAX_DIRECTIVES: number;
  GRAPHQL_MAX_BATCH: number;
  GRAPHQL_MAX_NODES: number;
  GRAPHQL_MAX_EXECUTION_MS: number;
  GRAPHQL_FAST_PATH: boolean;
  GRAPHQL_COMPILED_EXECUTION: boolean;
  GRAPHQL_COMPILE_AFTER: number;
  REFRESH_RATE_LIMIT_MAX: number;
  FORGOT_EMAIL_RATE_LIMIT_MAX: number;
  FORGOT_IP_RATE_LIMIT_MAX: number;
  ACCOUNT_TOKEN_RATE_LIMIT_MAX: number;
  VERIFY_RESEND_RATE_LIMIT_MAX: number;
  ADMIN_EMAIL?: string;
  ADMIN_PASSWORD?: string;
  CORS_ORIGINS?: string;
  REQUIRE_IF_MATCH: boolean;
  IDEMPOTENCY_TTL_SECONDS: number;
  GRAPHQL_PERSISTED_DOCUMENTS?: string;
  GRAPHQL_TRUSTED_DOCUMENTS_ONLY: boolean;
  SMTP_URL?: string;
  MAIL_FROM: string;
  PUBLIC_URL?: string;
  SMTP_CONNECTION_TIMEOUT_MS: number;
  SMTP_GREETING_TIMEOUT_MS: number;
  SMTP_SOCKET_TIMEOUT_MS: number;
  MAIL_CONCURRENCY: number;
  MAIL_QUEUE_MAX: number;
  MAIL_RECIPIENT_MAX_PER_HOUR: number;
  MAIL_ACCOUNT_MAX_PER_HOUR: number;
  MAIL_SENDER_MAX_PENDING: number;
  MAIL_PRIORITY_RESERVE: number;
  MAIL_CLAIM_LEASE_MS: number;
  RECENT_AUTH_MS: number;
  GRAPHIQL: boolean;
  CONTRACT_USAGE: boolean;
  CONTRACT_USAGE_RETENTION_DAYS: number;
  CONTRACT_USAGE_NEW_NAMES_PER_DAY: number;
  CONTRACT_USAGE_NEW_NAMES_PER_ADDRESS: number;
  CONTRACT_USAGE_ROWS_PER_DAY: number;
  CONTRACT_USAGE_ROWS_PER_ADDRESS: number;
  RATE_LIMIT_STORE_MAX_KEYS: number;
  GRAPHQL_DOCUMENT_CACHE_MAX_BYTES: number;
  GRAPHQL_DOCUMENT_CACHE_MAX_TEXT: number;
  NONCE_STORE_MAX: number;
  REVOCATION_STORE_MAX: number;
  KNOWN_LOGIN_STORE_MAX: number;
  SIGN_INS_MAX_PER_USER: number;
  IDEMPOTENCY_KEYS_MAX_PER_CLIENT: number;
  REFRESH_TOKENS_KEPT_PER_SIGN_IN: number;
  EXACT_COUNT_LIMIT: number;
  MAX_OFFSET: number;
}

/**
 * The environment checked by the validator Ajv generated from config-schema.ts (`pnpm codegen`; `pnpm contracts:check`
 * fails when it is stale): coerced, defaults filled, unknown variables dropped, every error at once. Compiling it here
 * was Ajv's first compile of the process, ~50 ms of every start. Ajv itself words the errors (`env/PORT must be
 * integer`), on the failing path only.
 */
function validateEnvironment(data: Record<string, unknown>): RawEnv {
  const validated = { ...data }; // a copy: validation coerces, fills defaults and drops what the schema does not name
  if (!validateConfig(validated)) {
    const errors = validateConfig.errors;
    throw Object.assign(new Error(new Ajv(CONFIG_AJV_OPTIONS).errorsText(errors, { dataVar: 'env' })), { errors });
  }
  return validated as unknown as RawEnv;
}

/** Validates `env` (throws one error listing every bad variable) and resolves secrets. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable (`DATABASE_URL=` in a shell or .env file) means "not set".
  const data = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const raw = validateEnvironment(data);
  const { dataDir, pgliteDir } = dataDirectories(raw);
  return {
    // Unset means development for secrets (generated, kept in DATA_DIR), but errors stay masked unless asked for.
    nodeEnv: raw.NODE_ENV ?? 'development',
    exposeErrors: raw.NODE_ENV === 'development',
    graphqlFastPath: raw.GRAPHQL_FAST_PATH,
    graphqlCompiledExecution: raw.GRAPHQL_COMPILED_EXECUTION && { afterExecutions: raw.GRAPHQL_COMPILE_AFTER },
    host: raw.HOST ?? (raw.NODE_ENV === 'production' ? '0.0.0.0' : '127.0.0.1'),
    port: raw.PORT,
    logLevel: raw.LOG_LEVEL,
    dataDir,
    pgliteDir,
    pgliteWasmTierUp: raw.PGLITE_WASM_TIER_UP,
    databaseUrl: raw.DATABASE_URL,
    migrateOnStart: raw.MIGRATE_ON_START,
    databasePoolMax: raw.DATABASE_POOL_MAX,
    databasePreparedStatements: raw.DATABASE_PREPARED_STATEMENTS,
    redisUrl: raw.REDIS_URL,
    graphqlLimits: {
      maxDepth: raw.GRAPHQL_MAX_DEPTH,
      maxAliases: raw.GRAPHQL_MAX_ALIASES,
      maxCost: raw.GRAPHQL_MAX_COST,
      maxTokens: raw.GRAPHQL_MAX_TOKENS,
      maxDirectives: raw.GRAPHQL_MAX_DIRECTIVES,
      maxBatch: raw.GRAPHQL_MAX_BATCH,
      maxNodes: raw.GRAPHQL_MAX_NODES,
      maxExecutionMs: raw.GRAPHQL_MAX_EXECUTION_MS,
    },
    defaultRateLimit: { max: raw.RATE_LIMIT_MAX, windowMs: raw.RATE_LIMIT_WINDOW_MS },
    rateLimits: {
      loginMax: raw.LOGIN_RATE_LIMIT_MAX,
      refreshMax: raw.REFRESH_RATE_LIMIT_MAX,
      loginIpMax: raw.LOGIN_IP_RATE_LIMIT_MAX,
      loginAccount: { max: raw.LOGIN_ACCOUNT_RATE_LIMIT_MAX, windowMs: raw.LOGIN_ACCOUNT_RATE_LIMIT_WINDOW_MS },
      signup: { max: raw.SIGNUP_RATE_LIMIT_MAX, windowMs: raw.SIGNUP_RATE_LIMIT_WINDOW_MS },
      forgotEmailMax: raw.FORGOT_EMAIL_RATE_LIMIT_MAX,
      forgotIpMax: raw.FORGOT_IP_RATE_LIMIT_MAX,
      accountTokenMax: raw.ACCOUNT_TOKEN_RATE_LIMIT_MAX,
      verifyResendMax: raw.VERIFY_RESEND_RATE_LIMIT_MAX,
    },
    trustProxy: parseTrustProxy(raw.TRUST_PROXY),
    refreshReuseGraceMs: raw.REFRESH_REUSE_GRACE_MS,
    metrics: { token: raw.METRICS_TOKEN, port: raw.METRICS_PORT, host: raw.METRICS_HOST },
    http: {
      headersTimeoutMs: raw.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: raw.HTTP_REQUEST_TIMEOUT_MS,
      maxConnections: raw.HTTP_MAX_CONNECTIONS,
      sendTimeoutMs: raw.HTTP_SEND_TIMEOUT_MS,
      // Behind a proxy every connection comes from the proxy: no cap per address unless one is set (the proxy caps).
      maxConnectionsPerAddress: raw.HTTP_MAX_CONNECTIONS_PER_ADDRESS ?? (raw.TRUST_PROXY === 'false' ? 256 : 0),
    },
    subscriptionLimits: {
      perConnection: raw.SUBSCRIPTIONS_MAX_PER_CONNECTION,
      perClient: raw.SUBSCRIPTIONS_MAX_PER_CLIENT,
      total: raw.SUBSCRIPTIONS_MAX_TOTAL,
    },
    secrets: resolveSecrets(env, { dataDir, production: raw.NODE_ENV === 'production' }),
    admin: raw.ADMIN_EMAIL && raw.ADMIN_PASSWORD ? { email: raw.ADMIN_EMAIL, password: raw.ADMIN_PASSWORD } : undefined,
    oauthProviders: parseOAuthProviders(data),
    corsOrigins: parseCorsOrigins(raw.CORS_ORIGINS),
    requireIfMatch: raw.REQUIRE_IF_MATCH,
    idempotencyTtlSeconds: raw.IDEMPOTENCY_TTL_SECONDS,
    persistedDocuments: parsePersistedDocuments(raw.GRAPHQL_PERSISTED_DOCUMENTS, raw.GRAPHQL_TRUSTED_DOCUMENTS_ONLY),
    tracing: parseTracing(data),
    mail: {
      smtpUrl: raw.SMTP_URL,
      from: raw.MAIL_FROM,
      publicUrl: (raw.PUBLIC_URL ?? `http://localhost:${raw.PORT}`).replace(/\/+$/, ''),
      outboxDir: raw.NODE_ENV === 'production' ? undefined : path.join(dataDir, 'outbox'),
      smtpTimeouts: {
        connectionMs: raw.SMTP_CONNECTION_TIMEOUT_MS,
        greetingMs: raw.SMTP_GREETING_TIMEOUT_MS,
        socketMs: raw.SMTP_SOCKET_TIMEOUT_MS,
      },
      outbox: {
        concurrency: raw.MAIL_CONCURRENCY,
        queueMax: raw.MAIL_QUEUE_MAX,
        perRecipientPerHour: raw.MAIL_RECIPIENT_MAX_PER_HOUR,
        perAccountPerHour: raw.MAIL_ACCOUNT_MAX_PER_HOUR,
        senderMaxPending: raw.MAIL_SENDER_MAX_PENDING,
        priorityReserve: raw.MAIL_PRIORITY_RESERVE,
        leaseMs: raw.MAIL_CLAIM_LEASE_MS,
      },
    },
    recentAuthMs: raw.RECENT_AUTH_MS,
    graphiql: raw.GRAPHIQL,
    collections: { exactCountLimit: raw.EXACT_COUNT_LIMIT, maxOffset: raw.MAX_OFFSET },
    contractUsage: {
      enabled: raw.CONTRACT_USAGE,
      retentionDays: raw.CONTRACT_USAGE_RETENTION_DAYS,
      newNamesPerDay: raw.CONTRACT_USAGE_NEW_NAMES_PER_DAY,
      newNamesPerAddress: raw.CONTRACT_USAGE_NEW_NAMES_PER_ADDRESS,
      rowsPerDay: raw.CONTRACT_USAGE_ROWS_PER_DAY,
      rowsPerAddress: raw.CONTRACT_USAGE_ROWS_PER_ADDRESS,
    },
    storeBounds: {
      rateLimitKeys: raw.RATE_LIMIT_STORE_MAX_KEYS,
      documentCacheBytes: raw.GRAPHQL_DOCUMENT_CACHE_MAX_BYTES,
      documentCacheMaxText: raw.GRAPHQL_DOCUMENT_CACHE_MAX_TEXT,
      nonces: raw.NONCE_STORE_MAX,
      revocations: raw.REVOCATION_STORE_MAX,
      knownLogins: raw.KNOWN_LOGIN_STORE_MAX,
      signInsPerUser: raw.SIGN_INS_MAX_PER_USER,
      idempotencyKeysPerClient: raw.IDEMPOTENCY_KEYS_MAX_PER_CLIENT,
      refreshTokensPerSignIn: raw.REFRESH_TOKENS_KEPT_PER_SIGN_IN,
    },
  };
}

/** The manifest's path (relative to the repository, as DATA_DIR is); the allow-list mode without one would refuse everything. */
function parsePersistedDocuments(file: string | undefined, trustedOnly: boolean): PersistedDocumentsConfig {
  if (trustedOnly && !file)
    throw new Error('GRAPHQL_TRUSTED_DOCUMENTS_ONLY: set GRAPHQL_PERSISTED_DOCUMENTS to the manifest of the documents to allow');
  return { file: file ? path.resolve(repoRoot, file) : undefined, trustedOnly };
}

/**
 * Traces are on when an OTLP endpoint is set, by the OpenTelemetry SDK's own variables (its exporter reads the rest:
 * OTEL_EXPORTER_OTLP_HEADERS, …), and OTEL_SDK_DISABLED=true turns them off again.
 */
function parseTracing(env: Record<string, string | undefined>): Config['tracing'] {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint || env.OTEL_SDK_DISABLED === 'true') return undefined;
  if (!/^https?:\/\/\S+$/.test(endpoint)) throw new Error(`OTEL_EXPORTER_OTLP_ENDPOINT: not an http(s) URL: ${endpoint.slice(0, 200)}`);
  return { serviceName: env.OTEL_SERVICE_NAME ?? 'users-posts' };
}

/** `CORS_ORIGINS`: comma-separated origins (`https://app.example.com,http://localhost:5173`), trailing slashes dropped. */
function parseCorsOrigins(value: string | undefined): string[] {
  const origins = (value ?? '')
    .split(',')
    .map((origin) => origin.trim().replace(/\/+$/, ''))
    .filter((origin) => origin !== '');
  const bad = origins.filter((origin) => !/^https?:\/\/[^/\s]+$/.test(origin));
  if (bad.length > 0) throw new Error(`CORS_ORIGINS: not an origin (scheme://host[:port]): ${bad.join(', ')}`);
  return [...new Set(origins)];
}

/** `TRUST_PROXY`: `false` (default), `true`, a hop count, or proxy addresses/CIDRs, as Fastify's `trustProxy` takes them. */
function parseTrustProxy(value: string): boolean | number | string {
  if (value === 'false') return false;
  if (value === 'true') return true;
  if (/^[0-9]+$/.test(value)) return Number(value);
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .join(',');
}
