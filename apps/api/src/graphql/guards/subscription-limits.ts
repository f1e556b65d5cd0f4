// Subscription caps of SPEC §2: open WebSockets per address and in total, subscriptions (WebSocket subscriptions and SSE
// streams alike) per client and in total, counted in this process.
//
// Counts are per instance: each instance bounds its own memory and event-loop work, which is what the caps protect;
// behind a balancer a client can hold N × the per-client cap across N instances (the rate limit, shared through Redis,
// still bounds how fast it opens them). Written by hand: graphql-ws and Yoga have no caps, and no kept library counts
// leases per key.
import type { Principal } from '../../auth/principal.js';

export interface SubscriptionLimits {
  /** Subscriptions active on one WebSocket. */
  perConnection: number;
  /** Subscriptions (WebSocket and SSE) of one client, and open WebSockets of one address. */
  perClient: number;
  /** Subscriptions, and open WebSockets, of the whole process. */
  total: number;
}

/** Gives a held slot back; calling it again does nothing. */
export type Release = () => void;

/** A slot, or why none was given. */
export type Lease = { release: Release } | { refused: 'client' | 'total' };

/** Held slots per key and in total, each against its cap. */
export class Tally {
  // bound: one per client holding a subscription or socket (SUBSCRIPTIONS_MAX_TOTAL)
  private readonly byKey = new Map<string, number>();
  private all = 0;

  constructor(
    private readonly perKey: number,
    private readonly total: number,
  ) {}

  take(key: string): Lease {
    const held = this.byKey.get(key) ?? 0;
    if (this.all >= this.total) return { refused: 'total' };
    if (held >= this.perKey) return { refused: 'client' };
    this.byKey.set(key, held + 1);
    this.all++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.all--;
        const left = (this.byKey.get(key) ?? 1) - 1;
        if (left > 0) this.byKey.set(key, left);
        else this.byKey.delete(key);
      },
    };
  }

  /** Slots held now (all keys). */
  get held(): number {
    return this.all;
  }
}

/** The process-wide tallies, shared by the WebSocket door and the SSE route. */
export class SubscriptionCaps {
  /** Open WebSockets, per address (the only thing known before the handshake). */
  readonly sockets: Tally;
  /** WebSocket subscriptions and SSE streams, per client (verified user, else address). */
  readonly subscriptions: Tally;

  constructor(readonly limits: SubscriptionLimits) {
    this.sockets = new Tally(limits.perClient, limits.total);
    this.subscriptions = new Tally(limits.perClient, limits.total);
  }
}

/** Seconds a refused client is told to wait: a slot frees when some subscription ends, at no known time. */
export const CAP_RETRY_AFTER_SECONDS = 10;

/** Why a cap refused, for the client. */
export function capMessage(refused: 'client' | 'total' | 'connection', limits: SubscriptionLimits, what = 'subscriptions'): string {
  if (refused === 'connection') return `Too many subscriptions on this connection (at most ${limits.perConnection}); complete one first`;
  if (refused === 'client') return `Too many open ${what} for this client (at most ${limits.perClient}); close one first`;
  return `The server holds as many ${what} as it can; retry later`;
}

/** The client a subscription counts against, as the HTTP default rate-limit bucket keys it (plugins/rate-limit.ts). */
export function clientKeyOf(principal: Principal, address: string): string {
  if (principal.kind === 'user') return `user:${principal.userId}`;
  return principal.kind === 'service' ? `service:${address}` : `ip:${address}`;
}

/**
 * How many subscribers start executing an event per event-loop turn. One event to thousands of subscribers would
 * otherwise run every execution in one chain of microtasks (shared loaders resolve at once), holding the loop for
 * seconds; between slices the loop polls I/O (other requests, /healthz). Written by hand: no library schedules this.
 */
export const SUBSCRIBERS_PER_TURN = 8;

let startedThisTurn = 0;
const waiting: (() => void)[] = [];
let turnScheduled = false;

function nextTurn(): void {
  turnScheduled = false;
  startedThisTurn = 0;
  const now = waiting.splice(0, SUBSCRIBERS_PER_TURN);
  startedThisTurn = now.length;
  for (const start of now) start();
  scheduleTurn();
}

function scheduleTurn(): void {
  if (turnScheduled || (startedThisTurn === 0 && waiting.length === 0)) return;
  turnScheduled = true;
  // setImmediate: the check phase comes after the poll phase, so pending I/O is served between two slices.
  setImmediate(nextTurn);
}

/** Resolves when this subscriber may execute the current event (at once while the turn's slice has room). */
export function deliveryTurn(): Promise<void> | undefined {
  if (startedThisTurn < SUBSCRIBERS_PER_TURN && waiting.length === 0) {
    startedThisTurn++;
    scheduleTurn();
    return undefined;
  }
  const turn = new Promise<void>((resolve) => waiting.push(resolve));
  scheduleTurn();
  return turn;
}
