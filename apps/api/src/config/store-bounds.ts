// The bounds of the stores a request can grow (SPEC §0.2): their shape in the configuration, and their defaults, read
// from the configuration schema so that each default is written once (config-schema.ts).
import { configDefault } from './config-schema.js';

export interface StoreBounds {
  /** `RATE_LIMIT_STORE_MAX_KEYS`: in-memory rate-limit counters, every bucket together. */
  rateLimitKeys: number;
  /** `GRAPHQL_DOCUMENT_CACHE_MAX_BYTES`: each GraphQL document cache, in bytes (an estimate of the text and its AST). */
  documentCacheBytes: number;
  /** `GRAPHQL_DOCUMENT_CACHE_MAX_TEXT`: the longest document text a cache keeps (characters). */
  documentCacheMaxText: number;
  /** `NONCE_STORE_MAX`, `REVOCATION_STORE_MAX`, `KNOWN_LOGIN_STORE_MAX`: entries of the in-memory identity stores. */
  nonces: number;
  revocations: number;
  knownLogins: number;
  /** `SIGN_INS_MAX_PER_USER`, `IDEMPOTENCY_KEYS_MAX_PER_CLIENT`, `REFRESH_TOKENS_KEPT_PER_SIGN_IN`: rows per owner. */
  signInsPerUser: number;
  idempotencyKeysPerClient: number;
  refreshTokensPerSignIn: number;
}

export const DEFAULT_STORE_BOUNDS: StoreBounds = {
  rateLimitKeys: configDefault('RATE_LIMIT_STORE_MAX_KEYS'),
  documentCacheBytes: configDefault('GRAPHQL_DOCUMENT_CACHE_MAX_BYTES'),
  documentCacheMaxText: configDefault('GRAPHQL_DOCUMENT_CACHE_MAX_TEXT'),
  nonces: configDefault('NONCE_STORE_MAX'),
  revocations: configDefault('REVOCATION_STORE_MAX'),
  knownLogins: configDefault('KNOWN_LOGIN_STORE_MAX'),
  signInsPerUser: configDefault('SIGN_INS_MAX_PER_USER'),
  idempotencyKeysPerClient: configDefault('IDEMPOTENCY_KEYS_MAX_PER_CLIENT'),
  refreshTokensPerSignIn: configDefault('REFRESH_TOKENS_KEPT_PER_SIGN_IN'),
};
