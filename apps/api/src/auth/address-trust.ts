// The owner's way in from an address never used before (SPEC §3.3): when the per-account login guard refuses an
// address, a link is mailed to the account's address; following it vouches for the address it is followed from.
//
// Decision: the link lets an address past the guard, it never logs anyone in (the password is still needed), and it
// vouches for whoever follows it, not for the address whose refusal sent it: only the mailbox holds it, so the attacker
// who sets it off gains nothing, and the owner may follow any live one. Links are not superseded by newer ones (an
// attacker's refusal must not void the link the owner is about to open), and at most MAILS_PER_WINDOW are mailed per
// account per window, each valid as long as the window (ACCOUNT_TOKEN_TTL_MS): whenever the budget refuses a new one,
// the last one mailed still works, so no attacker can use the budget up to keep the owner out. In the outbox a link is
// the owner's security mail (mail/delivery.ts): it may use the room reserved beyond MAIL_QUEUE_MAX, so a queue that
// others filled never refuses it, and it is charged to the account's address, not to the client whose refusal sent it,
// so it never waits behind that client's own queue.
import type { PrismaClient } from '@users-posts/db';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';
import { mailSender, type MailDelivery } from '../mail/delivery.js';
import { addressTrustMessage, addressTrustWithoutAccountMessage } from '../mail/messages.js';
import type { RateBucket } from '../http/rate-bucket.js';
import { ACCOUNT_TOKEN_TTL_MS } from './credentials/account-tokens.js';
import type { Identity } from './identity.js';

/** Links mailed per account (the login e-mail) per window: the owner's inbox cannot be flooded through this. */
export const MAILS_PER_WINDOW = 3;

/** The answer of every refusal by the per-account guard: the same for a right or wrong password, an account or none. */
export const GUARD_REFUSAL_MESSAGE =
  'Too many failed logins for this account from new addresses. If an account has this e-mail, a link to let this ' +
  'address in was mailed to it: open it here, then log in again; or retry after Retry-After seconds.';

/** The same refusal where no mail can leave (no SMTP_URL): no link is promised. */
const GUARD_REFUSAL_WITHOUT_MAIL = 'Too many failed logins for this account from new addresses; retry after Retry-After seconds.';

const invalidToken = () => new AppError('INVALID_TOKEN');

export interface AddressTrustOptions {
  /** PUBLIC_URL: the links' origin. */
  publicUrl: string;
  /** Counts one unit of `bucket` for `key` in the rate-limit store (shared across instances); rejects when over. */
  consume: (bucket: RateBucket, key: string) => Promise<void>;
  log: FastifyRequest['log'];
}

export class AddressTrust {
  /** The budget of links per account: in the rate-limit store (Redis with REDIS_URL), never evicted under pressure. */
  private readonly budget: RateBucket = {
    name: 'address-trust-mail',
    max: MAILS_PER_WINDOW,
    windowMs: ACCOUNT_TOKEN_TTL_MS.address_trust,
    key: () => '', // keyed by each call: `consume(budget, email)`
  };
  /** Offers between the refusal and the mail's admission (idle()). */
  // bound: offers in flight, one per refused login being answered (HTTP_MAX_CONNECTIONS)
  private readonly offering = new Set<Promise<void>>();

  constructor(
    private readonly prisma: PrismaClient,
    private readonly identity: Identity,
    private readonly mail: MailDelivery,
    private readonly options: AddressTrustOptions,
  ) {
    // Composed at its turn: the account is looked up then (after the answer), so nothing tells whether it exists; and a
    // message leaves either way, so the slot it holds does not tell either (as a reset's, account-lifecycle.ts).
    mail.define('address_trust', async ({ to }) => {
      const user = await prisma.user.findUnique({ where: { email: to }, select: { id: true, email: true } });
      if (!user) return addressTrustWithoutAccountMessage(to);
      const token = await identity.accountTokens.issue(user.id, 'address_trust', user.email);
      return addressTrustMessage(user.email, `${options.publicUrl}/trust-address#token=${token}`);
    });
  }

  /**
   * The per-account guard refused a login for `email` from an address its owner has not used: offers the account's
   * owner a link, within the budget, after the answer, and returns the refusal that says so (the same whatever the
   * password and whether the account exists: the lookup is the mail's, after the answer).
   */
  refuse(email: string): AppError {
    if (!this.mail.configured) return new AppError('RATE_LIMITED', GUARD_REFUSAL_WITHOUT_MAIL);
    this.offer(email);
    return new AppError('RATE_LIMITED', GUARD_REFUSAL_MESSAGE);
  }

  /** Mails `email`'s account a link within the budget, after the answer. Never fails the request. */
  private offer(email: string): void {
    const offering = (async () => {
      try {
        await this.options.consume(this.budget, email);
      } catch (error) {
        if (error instanceof AppError) return; // over the budget: the links already mailed in this window still work
        throw error;
      }
      await this.mail.enqueue({ kind: 'address_trust', to: email, sender: mailSender.owner(email) });
    })().catch((error: unknown) => this.options.log.warn({ err: error }, 'address-trust link not offered'));
    this.offering.add(offering);
    void offering.finally(() => this.offering.delete(offering));
  }

  /**
   * `POST /auth/login/trust-address`: spends the token; answers the address the link was mailed to, which the caller's
   * address may now log in to past the guard. 400 (40002) when it is unknown, spent, expired or for another purpose, or
   * when the account no longer has that address.
   */
  async follow(token: string): Promise<{ email: string }> {
    const record = await this.identity.accountTokens.find(token, 'address_trust');
    if (!record) throw invalidToken();
    const spent = await this.prisma.accountToken.deleteMany({ where: { id: record.id } });
    if (spent.count === 0) throw invalidToken(); // spent by a concurrent request
    const user = await this.prisma.user.findUnique({ where: { id: record.userId }, select: { email: true } });
    if (user?.email !== record.email) throw invalidToken();
    return { email: record.email };
  }

  /** Resolves when every offer so far was admitted or refused, and the mail queued so far has left (tests, a stop). */
  async idle(): Promise<void> {
    while (this.offering.size > 0) await Promise.all([...this.offering]);
    await this.mail.idle();
  }
}
