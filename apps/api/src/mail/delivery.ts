// Mail delivery after the answer: one message at a time, retried, never lost silently (SPEC §3.2, issue 30).
//
// Decision: a request never waits on SMTP. The answer says what the account now is (202 "accepted" for the flows
// whose job is to send); the message is composed and sent after it, retried after 1 s, 5 s and 30 s when the SMTP
// server fails, and a message still not delivered is logged at error level (its kind and user id, never its token).
// Sending after the answer also keeps `forgot` from telling, by its timing, whether an account exists. By hand: no
// kept library queues in-process work with retries without a broker (p-retry retries one call, not a queue); a
// delivery in flight when the process stops is lost, which the user meets as "no mail came" and retries.
import type { FastifyBaseLogger } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Mailer, MailMessage } from './mailer.js';

export const DEFAULT_RETRY_DELAYS_MS = [1_000, 5_000, 30_000] as const;

/** One message to compose and send: null when, at its turn, there turns out to be nothing to send (an unknown address). */
export interface MailJob {
  kind: 'password_reset' | 'email_verification' | 'email_changed';
  userId?: number | undefined;
  compose: () => Promise<MailMessage | null>;
}

export class MailDelivery {
  private tail: Promise<void> = Promise.resolve();
  private readonly stopping = new AbortController();

  constructor(
    private readonly mailer: Mailer,
    private readonly log: FastifyBaseLogger,
    private readonly retryDelaysMs: readonly number[] = DEFAULT_RETRY_DELAYS_MS,
  ) {}

  get configured(): boolean {
    return this.mailer.configured;
  }

  /** Queues a message; it is composed and sent after the jobs queued before it. */
  enqueue(job: MailJob): void {
    this.tail = this.tail.then(() => this.run(job));
  }

  /** Resolves when every message queued so far was delivered or given up (tests, and a graceful stop). */
  idle(): Promise<void> {
    return this.tail;
  }

  /** Stops retrying (messages waiting for a retry are given up and logged), then closes the transport. */
  async close(): Promise<void> {
    this.stopping.abort();
    await this.tail;
    this.mailer.close();
  }

  private async run(job: MailJob): Promise<void> {
    const about = { mail: job.kind, userId: job.userId };
    let message: MailMessage | null;
    try {
      message = await job.compose();
    } catch (error) {
      this.log.error({ ...about, err: error }, 'mail not sent: composing it failed');
      return;
    }
    if (!message) return;
    if (!this.mailer.configured) {
      this.log.warn(about, 'mail not sent: no SMTP_URL is set');
      return;
    }
    for (let attempt = 0; ; attempt++) {
      try {
        await this.mailer.send(message);
        this.log.info({ ...about, attempts: attempt + 1 }, 'mail sent');
        return;
      } catch (error) {
        const delay = this.retryDelaysMs[attempt];
        if (delay === undefined || this.stopping.signal.aborted) {
          this.log.error(
            { ...about, attempts: attempt + 1, reason: (error as Error).message },
            'mail not delivered: the SMTP server failed every attempt',
          );
          return;
        }
        this.log.warn({ ...about, attempt: attempt + 1, retryInMs: delay, reason: (error as Error).message }, 'mail delivery failed; retrying');
        await sleep(delay, undefined, { signal: this.stopping.signal }).catch(() => undefined);
      }
    }
  }
}
