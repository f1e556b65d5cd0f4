// The environment the server reads (its variables, types, bounds and defaults) as a JSON Schema, and the Ajv options it
// is validated with: the source of the generated validator (generated/config-validator.cjs, `pnpm codegen`).

import { COLLECTION_WINDOW } from '@users-posts/contracts';

export const CONFIG_SCHEMA = {
  type: 'object',
  // Unknown variables are dropped (removeAdditional), not refused: the environment holds much else.
  additionalProperties: false,
  properties: {
    NODE_ENV: { type: 'string', enum: ['development', 'test', 'production'] },
    // Unset: loopback outside production (a development server is not offered to the network), every address in it.
    HOST: { type: 'string', minLength: 1 },
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 4000 },
    LOG_LEVEL: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
    DATA_DIR: { type: 'string', minLength: 1, default: '.data' },
    PGLITE_DIR: { type: 'string', minLength: 1 },
    PGLITE_WASM_TIER_UP: { type: 'boolean', default: false },
    DATABASE_URL: { type: 'string', pattern: '^postgres(ql)?://' },
    MIGRATE_ON_START: { type: 'boolean', default: false },
    DATABASE_POOL_MAX: { type: 'integer', minimum: 1, maximum: 1000, default: 10 },
    DATABASE_PREPARED_STATEMENTS: { type: 'boolean', default: true },
    REDIS_URL: { type: 'string', pattern: '^rediss?://' },
    RATE_LIMIT_MAX: { type: 'integer', minimum: 1, default: 1000 },
    RATE_LIMIT_WINDOW_MS: { type: 'integer', minimum: 1000, default: 60_000 },
    LOGIN_RATE_LIMIT_MAX: { type: 'integer', minimum: 1, default: 10 },
    LOGIN_IP_RATE_LIMIT_MAX: { type: 'integer', minimum: 1, default: 20 },
    LOGIN_ACCOUNT_RATE_LIMIT_MAX: { type: 'integer', minimum: 1, default: 30 },
    LOGIN_ACCOUNT_RATE_LIMIT_WINDOW_MS: { type: 'integer', minimum: 1000, default: 900_000 },
    SIGNUP_RATE_LIMIT_MAX: { type: 'integer', minimum: 1, default: 30 },
    SIGNUP_RATE_LIMIT_WINDOW_MS: { type: 'integer', minimum: 1000, default: 3_600_000 },
    TRUST_PROXY: { type: 'string', pattern: '^(true|false|[0-9]+|[0-9a-fA-F.:/, ]+)$', default: 'false' },
    REFRESH_REUSE_GRACE_MS: { type: 'integer', minimum: 0, maximum: 60_000, default: 0 },
    METRICS_TOKEN: { type: 'string', minLength: 16 },
    METRICS_PORT: { type: 'integer', minimum: 0, maximum: 65535 },
    METRICS_HOST: { type: 'string', minLength: 1 },
    HTTP_HEADERS_TIMEOUT_MS: { type: 'integer', minimum: 1000, default: 10_000 },
    HTTP_REQUEST_TIMEOUT_MS: { type: 'integer', minimum: 1000, default: 30_000 },
    HTTP_MAX_CONNECTIONS: { type: 'integer', minimum: 1, default: 10_000 },
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: { type: 'integer', minimum: 0 },
    HTTP_SEND_TIMEOUT_MS: { type: 'integer', minimum: 1000, default: 30_000 },
    SUBSCRIPTIONS_MAX_PER_CONNECTION: { type: 'integer', minimum: 1, default: 10 },
    SUBSCRIPTIONS_MAX_PER_CLIENT: { type: 'integer', minimum: 1, default: 50 },
    SUBSCRIPTIONS_MAX_TOTAL: { type: 'integer', minimum: 1, default: 10_000 },
    GRAPHQL_MAX_DEPTH: { type: 'integer', minimum: 1, default: 10 },
    GRAPHQL_MAX_ALIASES: { type: 'integer', minimum: 0, default: 15 },
    GRAPHQL_MAX_COST: { type: 'integer', minimum: 1, default: 5000 },
    GRAPHQL_MAX_TOKENS: { type: 'integer', minimum: 1, default: 2000 },
    GRAPHQL_MAX_DIRECTIVES: { type: 'integer', minimum: 0, default: 50 },
    GRAPHQL_MAX_BATCH: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
    GRAPHQL_MAX_NODES: { type: 'integer', minimum: 1, default: 50_000 },
    GRAPHQL_MAX_EXECUTION_MS: { type: 'integer', minimum: 1, default: 10_000 },
    GRAPHQL_FAST_PATH: { type: 'boolean', default: true },
    GRAPHQL_COMPILED_EXECUTION: { type: 'boolean', default: true },
    GRAPHQL_COMPILE_AFTER: { type: 'integer', minimum: 1, default: 2 },
    REFRESH_RATE_LIMIT_MAX: { type: 'integer', minimum: 1, default: 60 },
    // The account lifecycle's buckets (rate-limits/buckets.ts): reset mail per address asked for and per client, per
    // hour; reset, verification and trust-link tokens tried per client, per 15 minutes; verification mail per user, per hour.
    FORGOT_EMAIL_RATE_LIMIT_MAX: { type: 'integer', minimum: 1, default: 5 },
    FORGOT_IP_RATE_LIMIT_MAX: { type: 'integer', minimum: 1, default: 20 },
    ACCOUNT_TOKEN_RATE_LIMIT_MAX: { type: 'integer', minimum: 1, default: 30 },
    VERIFY_RESEND_RATE_LIMIT_MAX: { type: 'integer', minimum: 1, default: 5 },
    // Judged at start by the contract's sign-up rules and the password policy (bootstrap/admin.ts): one rule, not restated.
    ADMIN_EMAIL: { type: 'string' },
    ADMIN_PASSWORD: { type: 'string' },
    CORS_ORIGINS: { type: 'string' },
    REQUIRE_IF_MATCH: { type: 'boolean', default: false },
    IDEMPOTENCY_TTL_SECONDS: { type: 'integer', minimum: 1, maximum: 604_800, default: 86_400 },
    GRAPHQL_PERSISTED_DOCUMENTS: { type: 'string' },
    GRAPHQL_TRUSTED_DOCUMENTS_ONLY: { type: 'boolean', default: false },
    SMTP_URL: { type: 'string', pattern: '^smtps?://' },
    MAIL_FROM: { type: 'string', minLength: 3, maxLength: 320, default: 'Users & Posts <no-reply@localhost>' },
    // The mail outbox and its worker (mail/, issue 40): SMTP's bounds, how many messages leave at once, the queue's size
    // and how much mail one address or one account may be sent per hour and kind.
    SMTP_CONNECTION_TIMEOUT_MS: { type: 'integer', minimum: 100, maximum: 600_000, default: 10_000 },
    SMTP_GREETING_TIMEOUT_MS: { type: 'integer', minimum: 100, maximum: 600_000, default: 10_000 },
    SMTP_SOCKET_TIMEOUT_MS: { type: 'integer', minimum: 100, maximum: 600_000, default: 30_000 },
    MAIL_CONCURRENCY: { type: 'integer', minimum: 1, maximum: 64, default: 4 },
    MAIL_QUEUE_MAX: { type: 'integer', minimum: 1, default: 10_000 },
    MAIL_RECIPIENT_MAX_PER_HOUR: { type: 'integer', minimum: 1, default: 10 },
    MAIL_ACCOUNT_MAX_PER_HOUR: { type: 'integer', minimum: 1, default: 20 },
    // One sender's share of the queue (issue 46), the room kept for the owner's security mail beyond MAIL_QUEUE_MAX,
    // and how long a claimed message is its worker's before another may send it (renewed while it is being sent).
    MAIL_SENDER_MAX_PENDING: { type: 'integer', minimum: 1, default: 20 },
    MAIL_PRIORITY_RESERVE: { type: 'integer', minimum: 1, default: 1_000 },
    MAIL_CLAIM_LEASE_MS: { type: 'integer', minimum: 3_000, maximum: 600_000, default: 30_000 },
    PUBLIC_URL: { type: 'string', pattern: '^https?://[^/\\s]+(/\\S*)?$' },
    RECENT_AUTH_MS: { type: 'integer', minimum: 1000, default: 600_000 },
    EXACT_COUNT_LIMIT: { type: 'integer', minimum: 0, maximum: 1_000_000, default: 10_000 },
    // The contract's `offset` maximum bounds the window: it may be lowered here, never raised past what clients were told.
    MAX_OFFSET: { type: 'integer', minimum: 0, maximum: COLLECTION_WINDOW.maxOffset, default: COLLECTION_WINDOW.maxOffset },
    GRAPHIQL: { type: 'boolean', default: true },
    // Usage of the contracts recorded per operation, field and client (plugins/contract-usage.ts, SPEC §6).
    CONTRACT_USAGE: { type: 'boolean', default: true },
    // Its bounds (SPEC §0.2): the days kept (the gate's 30-day window and a week's margin), the new client names and new
    // operation names admitted a day (each), one address's share of them, and the rows added a day in all and per address.
    CONTRACT_USAGE_RETENTION_DAYS: { type: 'integer', minimum: 1, maximum: 366, default: 37 },
    CONTRACT_USAGE_NEW_NAMES_PER_DAY: { type: 'integer', minimum: 1, maximum: 100_000, default: 1000 },
    CONTRACT_USAGE_NEW_NAMES_PER_ADDRESS: { type: 'integer', minimum: 1, maximum: 100_000, default: 10 },
    CONTRACT_USAGE_ROWS_PER_DAY: { type: 'integer', minimum: 100, maximum: 1_000_000, default: 20_000 },
    CONTRACT_USAGE_ROWS_PER_ADDRESS: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1000 },
    // Stores a request can grow (SPEC §0.2, docs/bounds.md): each one's bound, declared once here and read by the store.
    // In-memory rate-limit counters, all buckets together; at the bound a new key is refused (503), none is evicted.
    RATE_LIMIT_STORE_MAX_KEYS: { type: 'integer', minimum: 1000, default: 100_000 },
    // Parsed and prepared GraphQL documents (Yoga's parse cache and the fast path's memo), each cache in bytes, and the
    // largest text either keeps (longer ones are parsed again when sent again).
    GRAPHQL_DOCUMENT_CACHE_MAX_BYTES: { type: 'integer', minimum: 65_536, default: 16_777_216 },
    GRAPHQL_DOCUMENT_CACHE_MAX_TEXT: { type: 'integer', minimum: 256, default: 16_384 },
    // Without REDIS_URL: signed requests' nonces, revoked access tokens, known logins (in memory, one instance).
    NONCE_STORE_MAX: { type: 'integer', minimum: 1000, default: 100_000 },
    REVOCATION_STORE_MAX: { type: 'integer', minimum: 1000, default: 100_000 },
    KNOWN_LOGIN_STORE_MAX: { type: 'integer', minimum: 1000, default: 100_000 },
    // Rows a client's requests add to the database, per owner: its sign-ins (the oldest ended beyond it), its
    // Idempotency-Key records (the oldest forgotten beyond it) and the spent refresh tokens kept per sign-in for reuse detection.
    SIGN_INS_MAX_PER_USER: { type: 'integer', minimum: 1, maximum: 10_000, default: 100 },
    IDEMPOTENCY_KEYS_MAX_PER_CLIENT: { type: 'integer', minimum: 10, maximum: 1_000_000, default: 1000 },
    REFRESH_TOKENS_KEPT_PER_SIGN_IN: { type: 'integer', minimum: 2, maximum: 1000, default: 20 },
  },
  dependencies: { ADMIN_EMAIL: ['ADMIN_PASSWORD'], ADMIN_PASSWORD: ['ADMIN_EMAIL'] },
} as const;

/** A numeric variable's default, for the modules that hold it as a typed constant (a default written once, here). */
export const configDefault = (name: keyof typeof CONFIG_SCHEMA.properties): number => (CONFIG_SCHEMA.properties[name] as { default: number }).default;

/**
 * Ajv as env-schema sets it up (strings coerced to the schema's types, defaults filled, unknown variables dropped,
 * every error at once). The schema is ours and fixed, so it is not checked against the meta-schema when compiled
 * (`validateSchema: false`); config.test.ts checks it once instead.
 */
export const CONFIG_AJV_OPTIONS = {
  allErrors: true,
  removeAdditional: true,
  useDefaults: true,
  coerceTypes: true,
  allowUnionTypes: true,
  addUsedSchema: false,
  validateSchema: false,
} as const;
