// The mail outbox table (`mail_outbox`, issue 40): a message admitted under the queue's bound and the budgets in one
// statement, claimed by any instance's worker with FOR UPDATE SKIP LOCKED, and settled. Every time is the database's
// (LOCALTIMESTAMP, as the columns' defaults), so instances whose clocks differ agree on budgets and leases.
import { Prisma, type PrismaClient } from '@users-posts/db';
import type { MailOutboxConfig } from '../config/config.js';

/** The outbox's bounds by default (MAIL_CONCURRENCY, MAIL_QUEUE_MAX, MAIL_RECIPIENT_MAX_PER_HOUR, MAIL_ACCOUNT_MAX_PER_HOUR). */
export const DEFAULT_OUTBOX_CONFIG: MailOutboxConfig = { concurrency: 4, queueMax: 10_000, perRecipientPerHour: 10, perAccountPerHour: 20 };

/** A stored message: what composes it at send time (never a token: tokens are issued when it is composed). */
export interface OutboxRow {
  id: number;
  kind: string;
  recipient: string;
  userId: number | null;
  payload: Prisma.JsonValue | null;
  /** Attempts so far, this one included. */
  attempts: number;
}

export interface Admission {
  /** The row's id, or null when it was refused (`reason`). */
  id: number | null;
  reason?: 'queue_full' | 'recipient_budget' | 'account_budget' | undefined;
}

export interface OutboxLimits {
  queueMax: number;
  perRecipientPerHour: number;
  perAccountPerHour: number;
}

/** A claimed row is someone's until then: a worker that dies mid-send leaves it to be claimed again afterwards. */
export const CLAIM_LEASE_MS = 10 * 60_000;

/** How many of the oldest pending rows a claim ranks for fairness (its cost stays bounded however long the queue). */
const RANKED_ROWS = 1_000;

/** The budgets' window (`MAIL_*_MAX_PER_HOUR`); rows that left are kept this long, then purged. */
const BUDGET_WINDOW = Prisma.sql`LOCALTIMESTAMP - interval '1 hour'`;

const millis = (ms: number) => Prisma.sql`(${ms}::int * interval '1 millisecond')`;

export class MailOutbox {
  constructor(private readonly prisma: PrismaClient) {}

  /**
   * Inserts the message unless the outbox holds `queueMax` pending rows, or this recipient (or this account) was sent
   * its budget of this kind within the hour; one round trip, the counts bounded by the limits (each LIMITed scan
   * stops there). Two concurrent admissions may both pass at the edge: a budget is exceeded by at most the concurrency.
   */
  async admit(
    job: { kind: string; recipient: string; userId: number | null; payload: Prisma.JsonValue | null },
    limits: OutboxLimits,
  ): Promise<Admission> {
    const payload = job.payload === null ? null : JSON.stringify(job.payload);
    const [row] = await this.prisma.$queryRaw<{ pending: bigint; to_recipient: bigint; of_account: bigint; id: number | null }[]>`
      WITH counts AS (
        SELECT
          (SELECT count(*) FROM (SELECT 1 FROM mail_outbox WHERE status = 'pending' LIMIT ${limits.queueMax}) AS p) AS pending,
          (SELECT count(*) FROM (SELECT 1 FROM mail_outbox WHERE recipient = ${job.recipient} AND kind = ${job.kind}
             AND created_at > ${BUDGET_WINDOW} LIMIT ${limits.perRecipientPerHour}) AS r) AS to_recipient,
          (SELECT count(*) FROM (SELECT 1 FROM mail_outbox WHERE user_id = ${job.userId}::int AND kind = ${job.kind}
             AND created_at > ${BUDGET_WINDOW} LIMIT ${limits.perAccountPerHour}) AS a) AS of_account
      ), admitted AS (
        INSERT INTO mail_outbox (kind, recipient, user_id, payload, created_at, next_attempt_at)
        SELECT ${job.kind}, ${job.recipient}, ${job.userId}::int, ${payload}::jsonb, LOCALTIMESTAMP, LOCALTIMESTAMP FROM counts
        WHERE pending < ${limits.queueMax} AND to_recipient < ${limits.perRecipientPerHour} AND of_account < ${limits.perAccountPerHour}
        RETURNING id
      )
      SELECT pending, to_recipient, of_account, (SELECT id FROM admitted) AS id FROM counts`;
    if (row?.id != null) return { id: row.id };
    const reason =
      Number(row?.pending ?? 0) >= limits.queueMax
        ? 'queue_full'
        : Number(row?.to_recipient ?? 0) >= limits.perRecipientPerHour
          ? 'recipient_budget'
          : 'account_budget';
    return { id: null, reason };
  }

  /**
   * Up to `count` rows due now, each claimed for CLAIM_LEASE_MS (rows another worker holds are skipped, not waited for).
   * Fair between senders (the account a message is about, else its address): a row's rank is its place among its
   * sender's pending rows, those in flight or waiting for a retry first. So one account whose mail stalls every slot
   * (a hostile recipient's server, SMTP timeouts apart) is served one row per turn, and another's reset takes the next
   * free slot instead of waiting behind that account's queue.
   */
  claim(count: number): Promise<OutboxRow[]> {
    // Ranked first (materialized: a plain join let the planner loop over it once per row), among the oldest
    // RANKED_ROWS pending rows (the budgets keep one sender's share of them small); then the best-ranked due rows are
    // locked, skipping those another worker holds.
    return this.prisma.$queryRaw<OutboxRow[]>`
      WITH ranked AS MATERIALIZED (
        SELECT id, next_attempt_at, row_number() OVER (
          PARTITION BY coalesce(user_id::text, recipient) ORDER BY (next_attempt_at > LOCALTIMESTAMP) DESC, id
        ) AS turn
        FROM (SELECT id, user_id, recipient, next_attempt_at FROM mail_outbox WHERE status = 'pending' ORDER BY id LIMIT ${RANKED_ROWS}) AS oldest
      ), candidates AS MATERIALIZED (
        SELECT id, turn FROM ranked WHERE next_attempt_at <= LOCALTIMESTAMP ORDER BY turn, id LIMIT ${2 * count}
      )
      UPDATE mail_outbox SET attempts = attempts + 1, next_attempt_at = LOCALTIMESTAMP + ${millis(CLAIM_LEASE_MS)}
      WHERE id IN (
        SELECT m.id FROM mail_outbox m JOIN candidates c ON c.id = m.id
        WHERE m.status = 'pending' AND m.next_attempt_at <= LOCALTIMESTAMP
        ORDER BY c.turn, m.id LIMIT ${count} FOR UPDATE OF m SKIP LOCKED
      )
      RETURNING id, kind, recipient, user_id AS "userId", payload, attempts`;
  }

  async settle(id: number, status: 'sent' | 'skipped' | 'failed'): Promise<void> {
    await this.prisma.$executeRaw`UPDATE mail_outbox SET status = ${status} WHERE id = ${id}`;
  }

  /** Due again in `delayMs` (a failed attempt with retries left). */
  async retryLater(id: number, delayMs: number): Promise<void> {
    await this.prisma.$executeRaw`UPDATE mail_outbox SET next_attempt_at = LOCALTIMESTAMP + ${millis(delayMs)} WHERE id = ${id}`;
  }

  /** Rows waiting to leave (all of them, or those up to id `upTo`). */
  async pending(upTo?: number): Promise<number> {
    const [row] = await this.prisma.$queryRaw<{ count: bigint }[]>`
      SELECT count(*) AS count FROM mail_outbox WHERE status = 'pending' AND id <= ${upTo ?? 2_147_483_647}::int`;
    return Number(row?.count ?? 0);
  }

  /** Forgets rows that left (or were given up) before the budgets' window: they no longer count. */
  async purge(): Promise<void> {
    await this.prisma.$executeRaw`DELETE FROM mail_outbox WHERE status <> 'pending' AND created_at < ${BUDGET_WINDOW}`;
  }
}
