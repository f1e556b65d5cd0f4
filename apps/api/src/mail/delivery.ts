// Mail delivery after the answer, through a durable outbox (SPEC §3.2; issues 30, 40 and 46): admitted in the request
// under a bounded queue, a share per sender and budgets, sent by a worker several at a time in turns fair between
// senders, retried, never lost on a restart, never lost silently.
//
// Decision: a request never waits on SMTP, but it does wait for its message's admission: `enqueue` stores what composes
// the message (its kind, address, account, sender and a payload, never a token) as a row of `mail_outbox`
// (mail/outbox.ts) before the request answers, so that a full queue refuses the request that would add to it (503,
// MAIL_QUEUE_FULL, with Retry-After) instead of answering 202 and dropping the message, and a flood of requests is
// held back by its own admissions instead of piling them up after the answers. The refusal depends only on the queue
// and on the sender's own share (MAIL_SENDER_MAX_PENDING), never on the recipient, so it tells nothing of who has an
// account; the budgets per recipient and per account stay silent (counted alike for an address with an account or
// without). What cannot be refused (the mail a committed change sends, the guard's refusal) uses
// `enqueueInBackground`, which logs a refusal instead. The owner's security mail (address-trust links, change notices)
// may use MAIL_PRIORITY_RESERVE beyond MAIL_QUEUE_MAX whatever fills the queue, and goes first within its turn.
//
// The worker of every instance claims due rows (FOR UPDATE SKIP LOCKED, so several instances share them) in turns fair
// between senders (mail/outbox.ts): one client's flood is served a row per turn beside everyone else's. It composes each
// at its turn (issuing its token then), sends up to MAIL_CONCURRENCY at once, and retries a failure after 1 s, 5 s and
// 30 s; a message still not delivered is logged at error level (its kind and user id, never its address or token). One
// slow or hostile SMTP exchange holds one slot for at most the SMTP timeouts (mail/mailer.ts), never the others. A claim
// lasts MAIL_CLAIM_LEASE_MS and is renewed while its message is being sent: a row whose worker died is claimed again
// within one lease, by whichever instance runs next.
import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Prisma, PrismaClient } from '@users-posts/db';
import type { MailOutboxConfig } from '../config/config.js';
import { AppError } from '../errors/app-error.js';
import type { Mailer, MailMessage } from './mailer.js';
import { DEFAULT_OUTBOX_CONFIG, MailOutbox, type OutboxRow, type RefusalReason } from './outbox.js';

export const DEFAULT_RETRY_DELAYS_MS = [1_000, 5_000, 30_000] as const;

/** How often an idle worker looks for rows due (another instance's, a retry, one whose lease ended). */
const POLL_MS = 2_000;
/** How often rows older than the budgets' window are purged. */
const PURGE_MS = 5 * 60_000;
/** What a refused request is told to wait (the Retry-After rest/error-envelope.ts sends): a few thousand messages' time. */
const QUEUE_FULL_RETRY_AFTER_SECONDS = 30;

/** The kinds of mail; a new kind is a member here and a composer given to `define`. */
export type MailKind = 'password_reset' | 'email_verification' | 'email_changed' | 'address_trust';

/**
 * The owner's security mail: the trust link is the owner's way in past the login guard (SPEC §3.3) and the change
 * notice the only word the previous address gets. Neither can be set off in bulk by a stranger (a link needs the
 * account's guard to refuse, at most three an hour; a notice needs a signed-in change of e-mail, within the account's
 * budget), so they may use the reserve. A reset is not among them: anyone can ask for one for any address, so it is
 * held to its sender's share like the rest, and at the bound its request is refused (the asker may retry), never lost.
 */
const PRIORITY_KINDS: ReadonlySet<MailKind> = new Set(['address_trust', 'email_changed']);

/**
 * Who a message is charged to: its share of the queue and its turns. A client address (IPv6 by /64, as
 * http/client-address.ts normalises it) for what a request asks; the account for what a change of it sends (the users
 * service's hooks carry no request; creating an account is itself bounded per address by the sign-up bucket); and
 * for a trust link, the account's address itself, whatever address set it off: the links of one account form one line
 * (at most three an hour), never behind the queue of the client whose refusal sent them.
 */
export const mailSender = {
  address: (clientAddress: string) => `address:${clientAddress}`,
  account: (userId: number) => `account:${userId}`,
  owner: (email: string) => `owner:${email.toLowerCase()}`,
};

/** One message to send: what composes it at its turn. Stored as it is: no secret in `payload`. */
export interface MailJob {
  kind: MailKind;
  /** The address it goes to (budgeted per address and kind). */
  to: string;
  /** Who asked (`mailSender`): stored as a digest, its share and its turns counted on it. */
  sender: string;
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

/**
 * Composes a message at its turn: null when there turns out to be nothing to send (an address the account no longer
 * has). Never null for whether an account exists: that would free the slot sooner and tell (mail/messages.ts).
 */
export type MailComposer = (job: StoredMailJob) => Promise<MailMessage | null>;

/** What happened to a message, for /metrics (`dropped`: refused at admission, over a budget or a bound). */
export type MailOutcome = 'sent' | 'skipped' | 'failed' | 'dropped';

export interface MailDeliveryOptions {
  retryDelaysMs?: readonly number[] | undefined;
  outbox?: Partial<MailOutboxConfig> | undefined;
  /** Told of each message's outcome (plugins/metrics.ts counts them). */
  onOutcome?: ((outcome: MailOutcome, kind: string) => void) | undefined;
}

/** The refusal of a request whose message the outbox cannot take (the queue, or the sender's share, is full). */
const queueFull = () => new AppError('MAIL_QUEUE_FULL', `The mail outbox cannot take this message now; retry in ${QUEUE_FULL_RETRY_AFTER_SECONDS} s`);

const LOUD_REFUSALS: ReadonlySet<RefusalReason> = new Set(['queue_full', 'sender_share']);

export class MailDelivery {
  private readonly outbox: MailOutbox;
  // bound: one per mail kind, defined at start
  private readonly composers = new Map<string, MailComposer>();
  private readonly limits: MailOutboxConfig;
  private readonly retryDelaysMs: readonly number[];
  /** Admissions not yet answered by the database, and deliveries in flight. */
  // bound: one per request being answered (HTTP_MAX_CONNECTIONS), or per committed change's mail
  private readonly admitting = new Set<Promise<void>>();
  // bound: MAIL_CONCURRENCY
  private readonly delivering = new Set<Promise<void>>();
  // bound: one per idle() caller (tests, a stop)
  private readonly settledWaiters = new Set<() => void>();
  // bound: the poll, and one per retry of a delivery in flight (MAIL_CONCURRENCY)
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

  /** The bounds in force (the store's declaration reads them). */
  get bounds(): Readonly<MailOutboxConfig> {
    return this.limits;
  }

  /** How `kind` is composed at its turn (the account lifecycle defines its kinds when it is built). */
  define(kind: MailKind, composer: MailComposer): void {
    this.composers.set(kind, composer);
  }

  /**
   * Stores a message to send after the answer; the request awaits it. Rejects with MAIL_QUEUE_FULL (503) when the
   * queue or the sender's share is full, and with the database's error when the row could not be written: the request
   * fails rather than answering as if the message were on its way. A message over its budget resolves (silently).
   */
  enqueue(job: MailJob): Promise<void> {
    if (!this.mailer.configured) {
      this.log.warn({ mail: job.kind, userId: job.userId }, 'mail not sent: no SMTP_URL is set');
      return Promise.resolve();
    }
    const admission = this.admit(job);
    const tracked = admission.catch(() => undefined);
    this.admitting.add(tracked);
    void tracked.finally(() => this.admitting.delete(tracked));
    return admission;
  }

  /** `enqueue` for a caller that can neither wait nor be refused (a committed change, the guard's refusal): logged. */
  enqueueInBackground(job: MailJob): void {
    this.enqueue(job).catch(() => undefined); // each refusal and failure is logged by admit()
  }

  private async admit(job: MailJob): Promise<void> {
    const about = { mail: job.kind, userId: job.userId };
    let admission;
    try {
      admission = await this.outbox.admit(
        {
          kind: job.kind,
          recipient: job.to.toLowerCase(),
          userId: job.userId ?? null,
          payload: job.payload ?? null,
          // A digest: a fixed size whatever the client sent, and no client address kept in the table.
          sender: createHash('sha256').update(job.sender).digest('hex'),
          priority: PRIORITY_KINDS.has(job.kind),
        },
        this.limits,
      );
    } catch (error) {
      this.log.error({ ...about, err: error }, 'mail not queued: the outbox could not be written');
      throw error;
    }
    const { id, reason } = admission;
    if (id === null) {
      this.options.onOutcome?.('dropped', job.kind);
      // The kind and the reason, never the address (a log is no place for who is being mailed).
      if (reason && LOUD_REFUSALS.has(reason)) {
        this.log.warn({ ...about, reason }, 'mail not queued: the outbox is full (MAIL_QUEUE_MAX, MAIL_SENDER_MAX_PENDING)');
        throw queueFull();
      }
      this.log.info({ ...about, reason }, 'mail not queued: over its budget');
      return;
    }
    this.lastId = Math.max(this.lastId, id);
    this.pump();
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

  /** Rows waiting to leave, on every instance (the /metrics gauge, and the store's size). */
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
        const rows = await this.outbox.claim(free, this.limits.leaseMs);
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
    // The claim is renewed a few times per lease while the message is composed and sent (an SMTP exchange may last
    // up to its timeouts, longer than a lease): another worker takes it only once this one is gone.
    const renewal = setInterval(
      () => {
        this.outbox.renew(row, this.limits.leaseMs).catch((error: unknown) => this.log.warn({ err: error }, 'mail outbox: renewing a claim failed'));
      },
      Math.max(1, Math.floor(this.limits.leaseMs / 3)),
    );
    renewal.unref();
    const delivery = this.deliver(row).finally(() => {
      clearInterval(renewal);
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
