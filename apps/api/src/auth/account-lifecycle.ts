// The account lifecycle of SPEC §3.2: change and reset a password, verify an e-mail, and the mail a sign-up or a change
// of e-mail sends. Shared by the REST handlers (rest/routes/account.ts) and, through the users service's hooks, by
// every door that creates a user or changes an e-mail.
import type { PrismaClient } from '@users-posts/db';
import { AppError } from '../errors/app-error.js';
import { mailSender, type MailDelivery } from '../mail/delivery.js';
import { emailChangedNotice, passwordResetMessage, resetWithoutAccountMessage, tokenLink, verificationMessage } from '../mail/messages.js';
import { hashPassword, verifyPassword } from './credentials/passwords.js';
import type { TokenPair } from './credentials/refresh-tokens.js';
import type { Identity } from './identity.js';
import { assertStrongPassword } from './password-policy.js';

/** What follows a change of an account on every door: the users service calls these (SPEC §3.2's mail). */
export interface AccountHooks {
  /** A user was created (sign-up, or by an ADMIN): its address is to be verified. */
  created(user: { id: number; email: string }): void;
  /** A user's e-mail changed from `previous`: the new one is to be verified, the old one told. */
  emailChanged(user: { id: number; email: string }, previous: string): void;
}

const invalidToken = () => new AppError('INVALID_TOKEN');

/** What a password change hands back to the sign-in that made it: a fresh pair, or a renewed cookie. */
export type Renewed = { kind: 'tokens'; pair: TokenPair } | { kind: 'cookie'; secret: string };

export class AccountLifecycle {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly identity: Identity,
    private readonly mail: MailDelivery,
    private readonly publicUrl: string,
  ) {
    // Composed at their turn in the outbox's worker: a token is issued then, never stored in the outbox.
    mail.define('email_verification', async ({ to, userId }) => {
      // Only while the account still has this address (it may have changed again, or the account gone, meanwhile).
      const user = userId === undefined ? null : await prisma.user.findUnique({ where: { id: userId }, select: { email: true } });
      if (user?.email !== to) return null;
      const token = await identity.accountTokens.issue(userId!, 'email_verification', to);
      return verificationMessage(to, tokenLink(publicUrl, 'verify-email', token));
    });
    mail.define('email_changed', async ({ to }) => emailChangedNotice(to));
    mail.define('password_reset', async ({ to }) => {
      const user = await prisma.user.findUnique({ where: { email: to }, select: { id: true, email: true } });
      // A message either way: one skipped at once would free its slot a round trip sooner, and the asker's own next
      // mail would tell whether this address has an account (issue 46).
      if (!user) return resetWithoutAccountMessage(to);
      const token = await identity.accountTokens.issue(user.id, 'password_reset', user.email);
      return passwordResetMessage(user.email, tokenLink(publicUrl, 'reset-password', token));
    });
  }

  /** What the users service calls on every door: a sign-up, an account made by an ADMIN, a change of e-mail. */
  readonly userHooks: AccountHooks = {
    created: (user) => this.sendVerification(user.id, user.email),
    emailChanged: (user, previous) => {
      this.sendVerification(user.id, user.email);
      this.mail.enqueueInBackground({ kind: 'email_changed', to: previous, userId: user.id, sender: mailSender.account(user.id) });
    },
  };

  /** After a committed change, which no refusal can undo: a refusal is logged (the owner may ask again: resend). */
  private sendVerification(userId: number, email: string): void {
    this.mail.enqueueInBackground(this.verification(userId, email));
  }

  private verification(userId: number, email: string) {
    return { kind: 'email_verification', to: email, userId, sender: mailSender.account(userId) } as const;
  }

  /**
   * `POST /auth/password`: `current` must be the password (else 401, counted as a failed login by `onWrongPassword`),
   * `next` a strong one. A security event: every other sign-in and every API key is revoked and reset links stop working; the caller's
   * own sign-in goes on, renewed (a login of now; a fresh pair, or a new cookie secret).
   */
  async changePassword(
    caller: { userId: number; signInId: string },
    current: string,
    next: string,
    on: { onWrongPassword: (email: string) => Promise<void> },
  ): Promise<Renewed> {
    const user = await this.prisma.user.findUnique({ where: { id: caller.userId }, select: { email: true, passwordHash: true } });
    if (!user) throw new AppError('UNAUTHENTICATED', 'This account no longer exists');
    if (!user.passwordHash || !(await verifyPassword(user.passwordHash, current))) {
      await on.onWrongPassword(user.email); // throws RATE_LIMITED once the account's failures are over the limit
      throw new AppError('UNAUTHENTICATED', 'The current password is wrong');
    }
    assertStrongPassword(next, user.email, 'newPassword');
    const passwordHash = await hashPassword(next);
    const tokenVersion = await this.identity.securityEvents.revokeCredentials(caller.userId, {
      keep: caller.signInId,
      change: async (tx) => {
        // Only over the hash just verified: of two concurrent changes with the same current password, one wins.
        const { count } = await tx.user.updateMany({ where: { id: caller.userId, passwordHash: user.passwordHash }, data: { passwordHash } });
        if (count === 0) throw new AppError('CONFLICT', 'The password was changed by another request; log in again');
        await tx.accountToken.deleteMany({ where: { userId: caller.userId, purpose: 'password_reset' } });
      },
    });
    const renewed = await this.identity.signIns.reauthenticated(caller.signInId);
    if (renewed.secret !== undefined) return { kind: 'cookie', secret: renewed.secret };
    await this.identity.refreshTokens.revokeOutstanding(caller.signInId);
    const pair = await this.identity.refreshTokens.issue({ id: caller.userId, tokenVersion }, { id: caller.signInId, authTime: renewed.authTime });
    return { kind: 'tokens', pair };
  }

  /**
   * `POST /auth/password/forgot`: queues the reset mail, charged to `clientAddress` (the asker), whether or not an
   * account has this address: the lookup runs in the outbox's worker at the message's turn, and a message leaves either
   * way, so neither the answer, its timing nor the delay of the prober's own next mail tells. Rejects with
   * MAIL_QUEUE_FULL (503) when the outbox or the asker's share of it is full: what only the asker's own requests and
   * the queue decide, never the address asked for.
   */
  async forgotPassword(email: string, clientAddress: string): Promise<void> {
    // Stored for every address alike (one row, the same statement).
    await this.mail.enqueue({ kind: 'password_reset', to: email.toLowerCase(), sender: mailSender.address(clientAddress) });
  }

  /**
   * `POST /auth/password/reset`: the token spent and the password set in one transaction, with no exception to the
   * revocation (whoever held the account is out). The address the link reached is now verified. A weak password is
   * refused before the token is spent, so the link still works for a second try.
   */
  async resetPassword(token: string, next: string): Promise<{ email: string }> {
    const record = await this.identity.accountTokens.find(token, 'password_reset');
    if (!record) throw invalidToken();
    const user = await this.prisma.user.findUnique({ where: { id: record.userId }, select: { email: true } });
    if (user?.email !== record.email) throw invalidToken(); // the account's address changed since the link was sent
    assertStrongPassword(next, user.email, 'newPassword');
    const passwordHash = await hashPassword(next);
    await this.identity.securityEvents.revokeCredentials(record.userId, {
      change: async (tx) => {
        const spent = await tx.accountToken.deleteMany({ where: { id: record.id } });
        if (spent.count === 0) throw invalidToken(); // spent by a concurrent request
        await tx.accountToken.deleteMany({ where: { userId: record.userId, purpose: 'password_reset' } });
        await tx.user.updateMany({ where: { id: record.userId, emailVerifiedAt: null, email: record.email }, data: { emailVerifiedAt: new Date() } });
        await tx.user.updateMany({ where: { id: record.userId }, data: { passwordHash } });
      },
    });
    return { email: record.email };
  }

  /** `POST /auth/email/verify`: the address the token was mailed to is verified, if the account still has it. */
  async verifyEmail(token: string): Promise<void> {
    const record = await this.identity.accountTokens.find(token, 'email_verification');
    if (!record) throw invalidToken();
    await this.prisma.$transaction(async (tx) => {
      const spent = await tx.accountToken.deleteMany({ where: { id: record.id } });
      if (spent.count === 0) throw invalidToken();
      const verified = await tx.user.updateMany({ where: { id: record.userId, email: record.email }, data: { emailVerifiedAt: new Date() } });
      if (verified.count === 0) throw invalidToken();
    });
  }

  /** `POST /auth/email/verify/resend`: a new verification mail (earlier links stop working); nothing when already verified. */
  async resendVerification(userId: number): Promise<void> {
    if (!this.mail.configured) throw new AppError('MAIL_NOT_CONFIGURED');
    const user = await this.prisma.user.findUnique({ where: { id: userId }, select: { email: true, emailVerifiedAt: true } });
    // Awaited: at a full queue this request is refused (503, MAIL_QUEUE_FULL) rather than answered 202 for nothing.
    if (user && !user.emailVerifiedAt) await this.mail.enqueue(this.verification(userId, user.email));
  }
}
