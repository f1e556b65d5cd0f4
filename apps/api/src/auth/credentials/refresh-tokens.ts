// Refresh-token rotation: one-time tokens in families, stored as hashes; reuse of a spent token revokes the user.
import type { PrismaClient } from '@users-posts/db';
import { randomUUID } from 'node:crypto';
import { AppError } from '../../errors/app-error.js';
import type { Clock } from '../clock.js';
import { sha256 } from '../hashing.js';
import type { TokenCodec } from './jwt.js';
import type { SessionService } from './sessions.js';

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
  /** Told after a reuse revoked the user (open WebSockets re-verify). */
  onRevoked?: (userId: number) => void;
}

export class RefreshTokenService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly codec: TokenCodec,
    private readonly clock: Clock,
    private readonly sessions: SessionService,
    private readonly policy: RefreshReusePolicy = { graceMs: 0 },
  ) {}

  /** A fresh access + refresh pair for a login, starting a new family. */
  async issue(userId: number, tokenVersion: number, familyId: string = randomUUID()): Promise<TokenPair> {
    const access = this.codec.signAccess(userId, tokenVersion);
    const refresh = this.codec.signRefresh(userId);
    await this.prisma.refreshToken.create({
      data: { id: refresh.jti, familyId, userId, tokenHash: sha256(refresh.token), expiresAt: new Date(refresh.expiresAt) },
    });
    return { accessToken: access.token, refreshToken: refresh.token };
  }

  /**
   * Spends `token` and returns its successor pair. The spend is one conditional UPDATE, so of N concurrent
   * presentations exactly one wins. A spent token presented again is reuse (a thief or the owner replays what the
   * other already rotated): every family of the user is revoked, tokenVersion bumped (outstanding access tokens die)
   * and every cookie session ended. Only with an opted-in grace window does a presentation within it answer 409.
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
      const user = await this.prisma.user.findUnique({ where: { id: stored.userId }, select: { tokenVersion: true } });
      if (!user) throw new AppError('UNAUTHENTICATED', 'Unknown user');
      return this.issue(stored.userId, user.tokenVersion, stored.familyId);
    }

    const current = await this.prisma.refreshToken.findUnique({ where: { id: stored.id } });
    const usedAt = current?.usedAt?.getTime();
    const { graceMs } = this.policy;
    if (graceMs > 0 && current && !current.revokedAt && usedAt !== undefined && now.getTime() - usedAt <= graceMs) {
      throw new AppError('CONFLICT', 'This refresh token was just rotated by a concurrent request; use the newest token pair');
    }
    await this.revokeUser(stored.userId);
    await this.sessions.destroyAllOf(stored.userId);
    this.policy.onRevoked?.(stored.userId);
    throw new AppError('UNAUTHENTICATED', 'Refresh token reuse detected: every session of this user was revoked');
  }

  /** Revokes one family (logout on one device). */
  async revokeFamilyOf(token: string, userId: number): Promise<void> {
    const stored = await this.prisma.refreshToken.findUnique({ where: { tokenHash: sha256(token) } });
    if (!stored || stored.userId !== userId) return;
    await this.prisma.refreshToken.updateMany({
      where: { familyId: stored.familyId, revokedAt: null },
      data: { revokedAt: new Date(this.clock.now()) },
    });
  }

  /** Revokes every family of the user and bumps tokenVersion, so every access token is rejected too. */
  async revokeUser(userId: number): Promise<void> {
    const now = new Date(this.clock.now());
    await this.prisma.$transaction([
      this.prisma.refreshToken.updateMany({ where: { userId, revokedAt: null }, data: { revokedAt: now } }),
      this.prisma.user.update({ where: { id: userId }, data: { tokenVersion: { increment: 1 } } }),
    ]);
  }
}
