// The port of the access-token blocklist (by jti, until the token's own expiry): in memory (memory.ts) or Redis (redis.ts).
export interface RevocationStore {
  /** Blocks `jti` until `expiresAtMs` (after which the token is expired anyway). */
  revoke(jti: string, expiresAtMs: number): Promise<void>;
  isRevoked(jti: string, nowMs: number): Promise<boolean>;
}
