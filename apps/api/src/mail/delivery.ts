// Mail delivery after the answer, through a durable outbox (SPEC §3.2; issues 30 and 40): admitted under budgets and a
// bounded queue, sent by a worker several at a time, retried, never lost on a restart, never lost silently.
//
// Decision: a request never waits on SMTP. `enqueue` stores what composes the message (its kind, address, account and
// a payload, never a token) as a row of `mail_outbox` (mail/outbox.ts), after the answer's work; the worker of every
// instance claims due rows (FOR UPDATE SKIP LOCKED, so several instances share them), composes each at its turn
// (issuing its token then), sends up to MAIL_CONCURRENCY at once, and retries a failure after 1 s, 5 s and 30 s; a
// message still not delivered is logged at error level (its kind and user id, never its address or token). One slow
// or hostile SMTP exchange holds one slot for at most the SMTP timeouts (mail/mailer.ts), never the others, and claims
// are fair between senders (mail/outbox.ts): one account's flood is served a row per turn, beside everyone else's. A message
// over its budget (per address and kind, per account and kind, within the hour) or beyond MAIL_QUEUE_MAX is not stored
// and is logged with its kind; the request that asked for it answers as it would have (no oracle). A row outlives the
// process: one claimed by a worker that died is claimed again when its lease ends (CLAIM_LEASE_MS).
import type { FastifyBaseLogger } from 'fastify';
import type { Prisma, PrismaClient } from '@users-posts/db';
import type { MailOutboxConfig } from '../config/config.js';
import type { Mailer, MailMessage } from './mailer.js';
import { DEFAULT_OUTBOX_CONFIG, MailOutbox, type OutboxLimits, type OutboxRow } from './outbox.js';

export const DEFAULT_RETRY_DELAYS_MS = [1_000, 5_000, 30_000] as const;

/** How often an idle worker looks for rows due (another instance's, a retry, one whose lease ended). */
const POLL_MS = 2_000;
/** How often rows older than the budgets' window are purged. */
const PURGE_MS = 5 * 60_000;

/** The kinds of mail; a new kind is a member here and a composer given to `define`. */
export type MailKind = 'password_reset' | 'email_verification' | 'email_changed' | 'address_trust';

/** One message to send: what composes it at its turn. Stored as it is: no secret in `payload`. */
export interface MailJob {
  kind: MailKind;
  /** The address it goes to (budgeted per address and kind). */
  to: string;
  /** The account it is about (budgeted per account and kind). */
  userId?: number | undefined;
  /** Anything else composing needs, as JSON. */
  payload?: Prisma.JsonObject | undefined;
}

/** What the worker hands a composer: the stored job. */
export interface StoredMailJob {
  kind: MailKind;
  to: string;
  userId: number | undefined;
  payload: Prisma.JsonValue | null;
}

/** Composes a message at its turn: null when there turns out to be nothing to send (an unknown address, a changed one). */
export type MailComposer = (job: StoredMailJob) => Promise<MailMessage | null>;

/** What happened to a message, for /metrics (`dropped`: over its budget or beyond the queue's bound). */
export type MailOutcome = 'sent' | 'skipped' | 'failed' | 'dropped';

export interface MailDeliveryOptions {
  retryDelaysMs?: readonly number[] | undefined;
  outbox?: Partial<MailOutboxConfig> | undefined;
  /** Told of each message's outcome (plugins/metrics.ts counts them). */
  onOutcome?: ((outcome: MailOutcome, kind: string) => void) | undefined;
}

export class MailDelivery {
  private readonly outbox: MailOutbox;
  private readonly composers = new Map<string, MailComposer>();
  private readonly limits: OutboxLimits & { concurrency: number };
  private readonly retryDelaysMs: readonly number[];
  /** Admissions not yet answered by the database, and deliveries in flight. */
  private readonly admitting = new Set<Promise<void>>();
  private readonly delivering = new Set<Promise<void>>();
  private readonly settledWaiters = new Set<() => void>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** The newest row this instance stored: `idle()` waits for it and those before it. */
  private lastId = 0;
  private running = false;
  private pumping: Promise<void> | undefined;
  private pumpAgain = false;
  private lastPurge = 0;

  constructor(
    private readonly mailer: Mailer,
    prisma: PrismaClient,
    private readonly log: FastifyBaseLogger,
    private readonly options: MailDeliveryOptions = {},
  ) {
    this.outbox = new MailOutbox(prisma);
    this.limits = { ...DEFAULT_OUTBOX_CONFIG, ...options.outbox };
    this.retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  }

  get configured(): boolean {
    return this.mailer.configured;
  }

  /** How `kind` is composed at its turn (the account lifecycle defines its kinds when it is built). */
  define(kind: MailKind, composer: MailComposer): void {
    this.composers.set(kind, composer);
  }

  /**
   * Stores a message to send after the answer. Callers need not await it (it never rejects): a message over its
   * budget or beyond the queue's bound is dropped and logged, and the request answers the same either way.
   */
  enqueue(job: MailJob): Promise<void> {
    if (!this.mailer.configured) {
      this.log.warn({ mail: job.kind, userId: job.userId }, 'mail not sent: no SMTP_URL is set');
      return Promise.resolve();
    }
    const admission = this.admit(job);
    this.admitting.add(admission);
    void admission.finally(() => this.admitting.delete(admission));
    return admission;
  }

  private async admit(job: MailJob): Promise<void> {
    const about = { mail: job.kind, userId: job.userId };
    try {
      const { id, reason } = await this.outbox.admit(
        { kind: job.kind, recipient: job.to.toLowerCase(), userId: job.userId ?? null, payload: job.payload ?? null },
        this.limits,
      );
      if (id === null) {
        this.options.onOutcome?.('dropped', job.kind);
        // The kind and the reason, never the address (a log is no place for who is being mailed).
        if (reason === 'queue_full') this.log.warn({ ...about, reason }, 'mail not queued: the outbox is full (MAIL_QUEUE_MAX)');
        else this.log.info({ ...about, reason }, 'mail not queued: over its budget');
        return;
      }
      this.lastId = Math.max(this.lastId, id);
      this.pump();
    } catch (error) {
      this.log.error({ ...about, err: error }, 'mail not queued: the outbox could not be written');
    }
  }

  /** Starts this instance's worker (once the database is open). */
  start(): void {
    if (this.running || !this.mailer.configured) return;
    this.running = true;
    const poll = setInterval(() => {
      this.pump();
      this.wakeWaiters(); // idle() re-checks: a row another instance settled
    }, POLL_MS);
    poll.unref();
    this.timers.add(poll);
    this.pump();
  }

  /** Rows waiting to leave, on every instance (the /metrics gauge). */
  pending(): Promise<number> {
    return this.outbox.pending();
  }

  /** Resolves when every `enqueue` so far was stored or refused (over its budget, the queue full). */
  async queued(): Promise<void> {
    while (this.admitting.size > 0) await Promise.all([...this.admitting]);
  }

  /**
   * Resolves when every message this instance queued so far was delivered or given up (tests, and a graceful stop);
   * at once when the worker is not running (no SMTP, or closed), since nothing here would send them.
   */
  async idle(): Promise<void> {
    await this.queued();
    const mark = this.lastId;
    while (this.running && mark > 0) {
      const settled = this.nextSettle();
      if ((await this.outbox.pending(mark)) === 0) return;
      await settled;
    }
  }

  /** Stops the worker: deliveries in flight end (within the SMTP timeouts); rows still waiting stay for the next start. */
  async close(): Promise<void> {
    this.running = false;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.all([...this.admitting]);
    await this.pumping;
    await Promise.all([...this.delivering]);
    this.wakeWaiters();
    this.mailer.close();
  }

  private nextSettle(): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => (this.settledWaiters.delete(wake), resolve());
      this.settledWaiters.add(wake);
    });
  }

  private wakeWaiters(): void {
    for (const wake of [...this.settledWaiters]) wake();
  }

  /** Claims as many due rows as there are free slots, and again while it keeps finding them or is asked to. */
  private pump(): void {
    if (!this.running) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    const pumping = this.claimDue();
    this.pumping = pumping;
    void pumping.finally(() => {
      if (this.pumping === pumping) this.pumping = undefined;
      if (this.pumpAgain) this.pump(); // asked while the last claim was on its way
    });
  }

  private async claimDue(): Promise<void> {
    await Promise.resolve(); // `this.pumping` is set before the first claim
    try {
      do {
        this.pumpAgain = false;
        const free = this.limits.concurrency - this.delivering.size;
        if (free <= 0) break;
        const rows = await this.outbox.claim(free);
        for (const row of rows) this.startDelivery(row);
        if (rows.length === free) this.pumpAgain = true;
      } while (this.pumpAgain && this.running);
      if (Date.now() - this.lastPurge > PURGE_MS) {
        this.lastPurge = Date.now();
        await this.outbox.purge();
      }
    } catch (error) {
      this.log.error({ err: error }, 'mail outbox: claiming rows failed');
    }
  }

  private startDelivery(row: OutboxRow): void {
    const delivery = this.deliver(row).finally(() => {
      this.delivering.delete(delivery);
      this.wakeWaiters();
      this.pump();
    });
    this.delivering.add(delivery);
  }

  private async deliver(row: OutboxRow): Promise<void> {
    const kind = row.kind as MailKind;
    const about = { mail: kind, userId: row.userId ?? undefined };
    try {
      const composer = this.composers.get(kind);
      let message: MailMessage | null;
      try {
        if (!composer) throw new Error(`no composer for mail of kind ${kind}`);
        message = await composer({ kind, to: row.recipient, userId: row.userId ?? undefined, payload: row.payload });
      } catch (error) {
        this.log.error({ ...about, err: error }, 'mail not sent: composing it failed');
        await this.finish(row, 'failed');
        return;
      }
      if (!message) {
        await this.finish(row, 'skipped');
        return;
      }
      try {
        await this.mailer.send(message);
      } catch (error) {
        const reason = (error as Error).message;
        const delay = this.retryDelaysMs[row.attempts - 1];
        if (delay === undefined) {
          this.log.error({ ...about, attempts: row.attempts, reason }, 'mail not delivered: the SMTP server failed every attempt');
          await this.finish(row, 'failed');
          return;
        }
        this.log.warn({ ...about, attempt: row.attempts, retryInMs: delay, reason }, 'mail delivery failed; retrying');
        await this.outbox.retryLater(row.id, delay);
        this.wakeAfter(delay);
        return;
      }
      this.log.info({ ...about, attempts: row.attempts }, 'mail sent');
      await this.finish(row, 'sent');
    } catch (error) {
      // The database failed to record the outcome: the row is claimed again when its lease ends.
      this.log.error({ ...about, err: error }, 'mail outbox: recording a delivery failed');
    }
  }

  private async finish(row: OutboxRow, status: 'sent' | 'skipped' | 'failed'): Promise<void> {
    await this.outbox.settle(row.id, status);
    this.options.onOutcome?.(status, row.kind);
  }

  /** A retry is due in `delayMs`: this instance looks then rather than at its next poll. */
  private wakeAfter(delayMs: number): void {
    if (!this.running) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.pump();
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }
}
