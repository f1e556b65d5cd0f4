// The time source of every expiry decision (tokens, sessions, signatures), replaceable in tests.

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand, so a 15-minute expiry is tested without waiting. */
export class ManualClock implements Clock {
  constructor(private current = Date.now()) {}

  now(): number {
    return this.current;
  }

  advance(ms: number): void {
    this.current += ms;
  }
}
