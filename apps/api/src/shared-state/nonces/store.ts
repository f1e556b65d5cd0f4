// The port of seen signed-request nonces (replay protection): in memory (memory.ts) or in Redis (redis.ts).
export interface NonceStore {
  /** Records `nonce`; false when it was already seen within its lifetime (a replay). */
  claim(nonce: string, ttlMs: number, nowMs: number): Promise<boolean>;
}
