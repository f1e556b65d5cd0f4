// The mail outbox table (`mail_outbox`, issues 40 and 46): a message admitted under the queue's bound, its sender's
// share and the budgets in one statement, claimed by any instance's worker with FOR UPDATE SKIP LOCKED in turns fair
// between senders, its claim renewed while it is sent, and settled. Every time is the database's (LOCALTIMESTAMP, as
// the columns' defaults), so instances whose clocks differ agree on budgets and leases.
import { Prisma, type PrismaClient } from '@users-posts/db';
import type { MailOutboxConfig } from '../config/config.js';

/** The outbox's bounds by default (MAIL_CONCURRENCY, MAIL_QUEUE_MAX, MAIL_*_MAX_PER_HOUR, MAIL_SENDER_MAX_PENDING, …). */
export const DEFAULT_OUTBOX_CONFIG: MailOutboxConfig = {
  concurrency: 4,
  queueMax: 10_000,
  perRecipientPerHour: 10,
  perAccountPerHour: 20,
  senderMaxPending: 20,
  priorityReserve: 1_000,
  leaseMs: 30_000,
};

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

/** What the database is asked to store. */
export interface OutboxEntry {
  kind: string;
  recipient: string;
  userId: number | null;
  payload: Prisma.JsonValue | null;
  /** The sender's digest (64 hex digits): its share and its turns are counted on it. */
  sender: string;
  /** The owner's security mail: admitted into the reserve beyond `queueMax`, whatever its sender's share. */
  priority: boolean;
}

/**
 * Why a message was not stored. The first two refuse the request that asked (503): they depend only on the queue and
 * on the sender's own rows, never on the recipient. The budgets are silent: counted on rows alike for an address with
 * an account or without, they tell nothing either.
 */
export type RefusalReason = 'queue_full' | 'sender_share' | 'recipient_budget' | 'account_budget';

export interface Admission {
  /** The row's id, or null when it was refused (`reason`). */
  id: number | null;
  reason?: RefusalReason | undefined;
}

export type OutboxLimits = Pick<MailOutboxConfig, 'queueMax' | 'perRecipientPerHour' | 'perAccountPerHour' | 'senderMaxPending' | 'priorityReserve'>;

/** The budgets' window (`MAIL_*_MAX_PER_HOUR`); rows that left are kept this long, then purged. */
const BUDGET_WINDOW = Prisma.sql`LOCALTIMESTAMP - interval '1 hour'`;

const millis = (ms: number) => Prisma.sql`(${ms}::int * interval '1 millisecond')`;

export class MailOutbox {
  constructor(private readonly prisma: PrismaClient) {}

  /**
   * Inserts the message unless the outbox is full (`queueMax` pending rows; the owner's security mail may use
   * `priorityReserve` more), its sender already has `senderMaxPending` rows waiting (security mail excepted: its sender
   * is the account, whose budgets bound it), or this recipient (or this account) was sent its budget of this kind within
   * the hour. One round trip, each count bounded by its limit (a LIMITed scan stops there). The row's turn is its place
   * among its sender's waiting rows. Two concurrent admissions may both pass at the edge: a bound is exceeded by at most
   * the concurrency.
   */
  async admit(entry: OutboxEntry, limits: OutboxLimits): Promise<Admission> {
    const payload = entry.payload === null ? null : JSON.stringify(entry.payload);
    const bound = entry.priority ? limits.queueMax + limits.priorityReserve : limits.queueMax;
    const [row] = await this.prisma.$queryRaw<{ pending: bigint; of_sender: bigint; to_recipient: bigint; of_account: bigint; id: number | null }[]>`
      WITH counts AS (
        SELECT
          (SELECT count(*) FROM (SELECT 1 FROM mail_outbox WHERE status = 'pending' LIMIT ${bound}) AS p) AS pending,
          (SELECT count(*) FROM (SELECT 1 FROM mail_outbox WHERE sender = ${entry.sender} AND status = 'pending'
             LIMIT ${limits.senderMaxPending}) AS s) AS of_sender,
          (SELECT count(*) FROM (SELECT 1 FROM mail_outbox WHERE recipient = ${entry.recipient} AND kind = ${entry.kind}
             AND created_at > ${BUDGET_WINDOW} LIMIT ${limits.perRecipientPerHour}) AS r) AS to_recipient,
          (SELECT count(*) FROM (SELECT 1 FROM mail_outbox WHERE user_id = ${entry.userId}::int AND kind = ${entry.kind}
             AND created_at > ${BUDGET_WINDOW} LIMIT ${limits.perAccountPerHour}) AS a) AS of_account
      ), admitted AS (
        INSERT INTO mail_outbox (kind, recipient, user_id, payload, sender, priority, turn, created_at, next_attempt_at)
        SELECT ${entry.kind}, ${entry.recipient}, ${entry.userId}::int, ${payload}::jsonb, ${entry.sender}, ${entry.priority ? 0 : 1}::smallint,
          of_sender + 1, LOCALTIMESTAMP, LOCALTIMESTAMP
        FROM counts
        WHERE pending < ${bound} AND (${entry.priority}::boolean OR of_sender < ${limits.senderMaxPending})
          AND to_recipient < ${limits.perRecipientPerHour} AND of_account < ${limits.perAccountPerHour}
        RETURNING id
      )
      SELECT pending, of_sender, to_recipient, of_account, (SELECT id FROM admitted) AS id FROM counts`;
    if (row?.id != null) return { id: row.id };
    // The refusals of the request first, in an order that never looks at the recipient.
    const reason: RefusalReason =
      Number(row?.pending ?? 0) >= bound
        ? 'queue_full'
        : !entry.priority && Number(row?.of_sender ?? 0) >= limits.senderMaxPending
          ? 'sender_share'
          : Number(row?.to_recipient ?? 0) >= limits.perRecipientPerHour
            ? 'recipient_budget'
            : 'account_budget';
    return { id: null, reason };
  }

  /**
   * Up to `count` rows due now, each claimed for `leaseMs` (rows another worker holds are skipped, not waited for).
   * Fair between senders: rows go by their turn (their place among their sender's waiting rows when admitted), then
   * the owner's security mail first, then age. A sender never has more than t rows of turn ≤ t waiting (a row gets
   * turn t when t − 1 of its sender's are waiting), so a new sender's first message waits for at most one message of
   * each other sender, however many each queued; and a trust link, first of its turn, waits for none of theirs but
   * those in flight. The index (status, turn, priority, id) serves the order; a claim reads the due rows in that order
   * and stops at `count`.
   */
  claim(count: number, leaseMs: number): Promise<OutboxRow[]> {
    return this.prisma.$queryRaw<OutboxRow[]>`
      UPDATE mail_outbox SET attempts = attempts + 1, next_attempt_at = LOCALTIMESTAMP + ${millis(leaseMs)}
      WHERE id IN (
        SELECT m.id FROM mail_outbox m
        WHERE m.status = 'pending' AND m.next_attempt_at <= LOCALTIMESTAMP
        ORDER BY m.turn, m.priority, m.id LIMIT ${count} FOR UPDATE OF m SKIP LOCKED
      )
      RETURNING id, kind, recipient, user_id AS "userId", payload, attempts`;
  }

  /**
   * The claim of a row still being sent is extended by `leaseMs` (an SMTP exchange may outlast a lease); only while it
   * is still this attempt's (a claim that lapsed and was taken by another worker is that worker's now).
   */
  async renew(row: Pick<OutboxRow, 'id' | 'attempts'>, leaseMs: number): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE mail_outbox SET next_attempt_at = LOCALTIMESTAMP + ${millis(leaseMs)}
      WHERE id = ${row.id} AND status = 'pending' AND attempts = ${row.attempts}`;
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
