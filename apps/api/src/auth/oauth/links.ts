// The OpenID identities linked to an account: the authenticated link flow (`authorize?link=true`, bound to the sign-in
// that asked and needing a recent login at both ends), and their owner's list and removal (`/api/v1/oauth-links`).
// Security events end every link of the user (security-events.ts).
import { Prisma, type PrismaClient, type User } from '@users-posts/db';
import { AppError } from '../../errors/app-error.js';
import { isStorableText } from '../../contract/text.js';
import type { Clock } from '../clock.js';
import type { OidcProfile } from './flow.js';
import type { LinkBinding } from './transaction.js';

/** What the owner sees of a link in `GET /api/v1/oauth-links`: not the provider's subject (an identifier of the person). */
export interface OAuthLinkRecord {
  id: number;
  provider: string;
  createdAt: Date;
}

const isUniqueViolation = (error: unknown) => error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';

const signInEnded = () =>
  new AppError(
    'UNAUTHENTICATED',
    'The sign-in that asked for this link has ended (a logout, a password change or reset); sign in again and start over',
  );

export class OAuthLinks {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    /** RECENT_AUTH_MS: how old the login behind a link may be, when it starts and when it is written. */
    private readonly recentAuthMs: number,
  ) {}

  /** The binding of a link flow asked from `signInId` (the caller's, checked recent by the door), or 401 when it ended. */
  async bind(userId: number, signInId: string): Promise<LinkBinding> {
    const signIn = await this.prisma.session.findFirst({
      where: { id: signInId, userId },
      select: { user: { select: { tokenVersion: true } } },
    });
    if (!signIn) throw signInEnded();
    return { userId, signInId, tokenVersion: signIn.user.tokenVersion };
  }

  /**
   * The callback of a link flow: attaches (provider, sub) to the user of `binding` — never to anyone else — when the
   * sign-in that asked still lives at the same token version (else 401) and its login is still recent (else 403 40301:
   * the link is written now, and a sensitive change is judged when it is made). The user's row is read `FOR SHARE`: a
   * concurrent security event either waits for this link (and then ends it with the rest) or has committed first (and
   * this link is refused). 409 when the identity is linked to another user already. When the provider verified the
   * account's own address, this service now knows it verified.
   */
  async link(provider: string, profile: OidcProfile, binding: LinkBinding): Promise<User> {
    const { userId } = binding;
    const link = () =>
      this.prisma.$transaction(async (tx) => {
        const now = this.clock.now();
        const [current] = await tx.$queryRaw<{ tokenVersion: number }[]>(
          Prisma.sql`SELECT token_version AS "tokenVersion" FROM users WHERE id = ${userId} FOR SHARE`,
        );
        const signIn = await tx.session.findFirst({
          where: { id: binding.signInId, userId, expiresAt: { gt: new Date(now) } },
          select: { authTime: true },
        });
        if (!current || current.tokenVersion !== binding.tokenVersion || !signIn) throw signInEnded();
        if (now - signIn.authTime.getTime() > this.recentAuthMs) throw new AppError('REAUTHENTICATION_REQUIRED');

        const account = await tx.oAuthAccount.findUnique({ where: { provider_subject: { provider, subject: profile.subject } } });
        if (account && account.userId !== userId) {
          throw new AppError('CONFLICT', `This ${provider} login is already linked to another account`);
        }
        // What the provider asserted, kept beside the link when it can be stored; nothing reads it to decide anything.
        const email = profile.email !== undefined && isStorableText(profile.email) ? profile.email.toLowerCase() : null;
        if (!account) await tx.oAuthAccount.create({ data: { provider, subject: profile.subject, userId, email } });
        const user = await tx.user.findUniqueOrThrow({ where: { id: userId } });
        if (profile.emailVerified && email === user.email && !user.emailVerifiedAt) {
          return tx.user.update({ where: { id: userId }, data: { emailVerifiedAt: new Date(now) } });
        }
        return user;
      });
    try {
      return await link();
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      return link(); // a concurrent link of the same identity: the retry sees its row
    }
  }

  /** The user's links, newest first, and how many there are. */
  async list(userId: number, window: { limit: number; offset: number }): Promise<{ items: OAuthLinkRecord[]; total: number }> {
    const where = { userId };
    const select = { id: true, provider: true, createdAt: true } as const;
    const [items, total] = await this.prisma.$transaction([
      this.prisma.oAuthAccount.findMany({ where, select, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: window.limit, skip: window.offset }),
      this.prisma.oAuthAccount.count({ where }),
    ]);
    return { items, total };
  }

  /** Removes one link of `userId`; false when it has none with this id. That provider login no longer logs in as them. */
  async remove(id: number, userId: number): Promise<boolean> {
    const { count } = await this.prisma.oAuthAccount.deleteMany({ where: { id, userId } });
    return count === 1;
  }
}
