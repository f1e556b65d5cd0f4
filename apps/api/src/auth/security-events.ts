// Security events (SPEC §3.2): a password change or reset, a logout everywhere, a refresh-token reuse. Each revokes every
// credential of the user — sign-ins (refresh tokens and cookies with them), access tokens, API keys, linked OpenID
// identities — except the sign-in that performed it, when there is one, so that nothing an attacker could have obtained
// keeps working (a provider login linked by a thief would otherwise log in as the owner after every other revocation).
import type { Prisma, PrismaClient } from '@users-posts/db';

export class SecurityEvents {
  constructor(
    private readonly prisma: PrismaClient,
    /** Told after each event (open WebSockets of the user re-verify their credentials). */
    private readonly revoked: (userId: number) => void,
  ) {}

  /**
   * One transaction: `change` first (the event itself, e.g. the new password hash; it may refuse by throwing), then the
   * token version bumped (every access token dies, including the kept sign-in's, which gets a fresh one; and the bump's
   * row lock orders this against a login starting a sign-in, credentials/sign-ins.ts, and a link being written,
   * oauth/links.ts), then every other sign-in, every API key and every OpenID link deleted. The owner links a provider
   * again with a fresh login (`authorize?link=true`). Returns the new token version.
   */
  async revokeCredentials(
    userId: number,
    options: { keep?: string | undefined; change?: (tx: Prisma.TransactionClient) => Promise<void> } = {},
  ): Promise<number> {
    const tokenVersion = await this.prisma.$transaction(async (tx) => {
      await options.change?.(tx);
      const [bumped] = await tx.user.updateManyAndReturn({
        where: { id: userId },
        data: { tokenVersion: { increment: 1 } },
        select: { tokenVersion: true },
      });
      await tx.session.deleteMany({ where: { userId, ...(options.keep ? { NOT: { id: options.keep } } : {}) } });
      await tx.apiKey.deleteMany({ where: { userId } });
      await tx.oAuthAccount.deleteMany({ where: { userId } });
      return bumped?.tokenVersion ?? 0;
    });
    this.revoked(userId);
    return tokenVersion;
  }
}
