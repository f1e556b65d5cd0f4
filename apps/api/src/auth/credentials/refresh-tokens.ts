// Refresh-token rotation: one-time tokens in families, stored as hashes; reuse of a spent token revokes the user.
import { Prisma, type PrismaClient } from '@users-posts/db';
import { DEFAULT_STORE_BOUNDS } from '../../config/store-bounds.js';
import { AppError } from '../../errors/app-error.js';
import type { Clock } from '../clock.js';
import { sha256 } from '../hashing.js';
import type { TokenCodec } from './jwt.js';
import type { SignIn, SignInService } from './sign-ins.js';

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
}

export interface RefreshReusePolicy {
  /**
   * REFRESH_REUSE_GRACE_MS: how long after a token was spent a second presentation counts as a concurrent duplicate
   * (two tabs, a network retry) rather than theft: 409, nothing revoked. 0 (the default, SPEC §3): any second
   * presentation is reuse.
   */
  graceMs: number;
  /** The security event of a reuse (SPEC §3.2): every credential of the user revoked (security-events.ts). */
  onReuse: (userId: number) => Promise<void>;
  /** REFRESH_TOKENS_KEPT_PER_SIGN_IN: spent tokens kept per sign-in to recognise a replay. */
  keptPerSignIn?: number | undefined;
}

const isForeignKeyViolation = (error: unknown) => error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2003';

export class RefreshTokenService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly codec: TokenCodec,
    private readonly clock: Clock,
    private readonly signIns: SignInService,
    private readonly policy: RefreshReusePolicy,
  ) {}

  /** A fresh access + refresh pair under a token sign-in (its first at login, the next at each refresh). */
  async issue(user: { id: number; tokenVersion: number }, signIn: Pick<SignIn, 'id' | 'authTime'>): Promise<TokenPair> {
    const access = this.codec.signAccess(user.id, user.tokenVersion, signIn);
    const refresh = this.codec.signRefresh(user.id);
    try {
      await this.prisma.refreshToken.create({
        data: { id: refresh.jti, familyId: signIn.id, userId: user.id, tokenHash: sha256(refresh.token), expiresAt: new Date(refresh.expiresAt) },
      });
    } catch (error) {
      // The sign-in was ended (a logout, a security event) while this pair was being made: nothing to hand out.
      if (isForeignKeyViolation(error)) throw new AppError('UNAUTHENTICATED', 'This sign-in was ended; log in again');
      throw error;
    }
    return { accessToken: access.token, refreshToken: refresh.token };
  }

  /**
   * Spends `token` and returns its successor pair. The spend is one conditional UPDATE, so of N concurrent
   * presentations exactly one wins. A spent token presented again is reuse (a thief or the owner replays what the
   * other already rotated): a security event, every credential of the user revoked. Only with an opted-in grace window
   * does a presentation within it answer 409.
   */
  async rotate(token: string): Promise<TokenPair> {
    const claims = this.codec.verifyRefresh(token);
    const stored = await this.prisma.refreshToken.findUnique({ where: { tokenHash: sha256(token) } });
    if (!stored || stored.id !== claims.jti || stored.userId !== claims.userId) {
      throw new AppError('UNAUTHENTICATED', 'Unknown refresh token');
    }
    if (stored.revokedAt) throw new AppError('UNAUTHENTICATED', 'Refresh token revoked');

    const now = new Date(this.clock.now());
    const spent = await this.prisma.refreshToken.updateMany({
      where: { id: stored.id, usedAt: null, revokedAt: null },
      data: { usedAt: now },
    });
    if (spent.count === 1) {
      const signIn = await this.signIns.renewTokens(stored.familyId);
      const user = await this.prisma.user.findUnique({ where: { id: stored.userId }, select: { id: true, tokenVersion: true } });
      if (!signIn || !user) throw new AppError('UNAUTHENTICATED', 'This sign-in was ended; log in again');
      const pair = await this.issue(user, signIn);
      // After the new pair, not before: the winner of a race mints its pair as soon as before (SPEC §3: exactly one).
      await this.forgetOldestSpent(stored.familyId);
      return pair;
    }

    const current = await this.prisma.refreshToken.findUnique({ where: { id: stored.id } });
    const usedAt = current?.usedAt?.getTime();
    const { graceMs } = this.policy;
    if (graceMs > 0 && current && !current.revokedAt && usedAt !== undefined && now.getTime() - usedAt <= graceMs) {
      throw new AppError('CONFLICT', 'This refresh token was just rotated by a concurrent request; use the newest token pair');
    }
    if (current) await this.policy.onReuse(stored.userId); // not when the sign-in was ended meanwhile (its tokens went with it)
    throw new AppError('UNAUTHENTICATED', 'Refresh token reuse detected: every sign-in and API key of this user was revoked');
  }

  /**
   * A sign-in keeps its newest REFRESH_TOKENS_KEPT_PER_SIGN_IN spent tokens (SPEC §0.2): enough to see a token presented
   * again after a thief or the owner rotated it (a replay comes within a rotation or two), not one row per refresh
   * for ever. A token spent longer ago than that is unknown (401), as an expired one is, not reuse.
   */
  private async forgetOldestSpent(familyId: string): Promise<void> {
    await this.prisma.$executeRaw`
      DELETE FROM refresh_tokens WHERE id IN (
        SELECT id FROM refresh_tokens WHERE family_id = ${familyId} AND used_at IS NOT NULL
        ORDER BY used_at DESC, id DESC OFFSET ${this.policy.keptPerSignIn ?? DEFAULT_STORE_BOUNDS.refreshTokensPerSignIn})`;
  }

  /** The sign-in a refresh token of `userId` belongs to, or null (logout ends it by the token the client holds). */
  async signInOf(token: string, userId: number): Promise<string | null> {
    const stored = await this.prisma.refreshToken.findUnique({ where: { tokenHash: sha256(token) }, select: { userId: true, familyId: true } });
    return stored && stored.userId === userId ? stored.familyId : null;
  }

  /** Revokes the unspent refresh tokens of one sign-in, which goes on with a pair issued next (a password change). */
  async revokeOutstanding(signInId: string): Promise<void> {
    await this.prisma.refreshToken.updateMany({
      where: { familyId: signInId, revokedAt: null, usedAt: null },
      data: { revokedAt: new Date(this.clock.now()) },
    });
  }
}
