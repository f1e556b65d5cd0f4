// The port of (account, client address) pairs that logged in with the right password (SPEC §3.3): the per-account
// guard against distributed guessing never refuses an address the owner has logged in from. In memory (memory.ts) or
// in Redis (redis.ts); keys are hashes, never an e-mail or an address in clear.
export interface KnownLoginStore {
  /** Remembers `key` for `ttlMs`. */
  remember(key: string, ttlMs: number): Promise<void>;
  has(key: string): Promise<boolean>;
}
