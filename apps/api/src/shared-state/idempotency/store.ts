// The port of Idempotency-Key records (rest/idempotency.ts): one record per caller scope and key, claimed by the first
// request and holding its answer. Backend: the database (database.ts), which every instance shares.

/** Which record, and which run owns it: a run whose lease was taken over holds a stale claim and can change nothing. */
export interface ClaimedKey {
  scope: string;
  key: string;
  claim: string;
}

/** An answer as a retry gets it back: status, the headers a client needs, the body bytes as sent. */
export interface KeptAnswer {
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

export interface IdempotencyRecord {
  claim: string;
  /** HMAC of the request as a retry must repeat it. */
  fingerprint: string;
  /** Until when the first run owns the key (then a retry may take it over). */
  lockedUntil: number;
  expiresAt: number;
  /** The answer, once the run has answered. */
  answer: KeptAnswer | undefined;
}

export interface IdempotencyStore {
  /** Creates the record of a first run; false when one exists for this scope and key. */
  create(claimed: ClaimedKey, record: { fingerprint: string; lockedUntil: number; expiresAt: number }): Promise<boolean>;
  find(scope: string, key: string): Promise<IdempotencyRecord | undefined>;
  /** Hands a run that outlived its lease over to `next`; false when another request did so first, or it answered. */
  takeOver(current: ClaimedKey, next: { claim: string; lockedUntil: number }): Promise<boolean>;
  /** Keeps the answer of the run that owns the record. */
  keep(claimed: ClaimedKey, answer: KeptAnswer): Promise<void>;
  /** Drops the record, if `claimed` still owns it (an expired record, or a run whose answer is not kept). */
  drop(claimed: ClaimedKey): Promise<void>;
  /** Removes the records expired before `now`. */
  purgeExpired(now: number): Promise<void>;
}
