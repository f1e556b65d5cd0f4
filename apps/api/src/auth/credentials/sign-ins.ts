// Sign-ins (SPEC §3.2): one row per login, whether it holds on by refresh tokens or by the `sid` cookie; listed to
// their owner, ended one by one, and the unit every access token and cookie is checked against on each request.
import { Prisma, type PrismaClient, type SignInKind } from '@users-posts/db';
import { USER_AGENT_MAX } from '@users-posts/contracts';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import { randomSecret, sha256 } from '../hashing.js';
import { DEFAULT_STORE_BOUNDS } from '../../config/store-bounds.js';

export const SESSION_COOKIE = 'sid';
export const SESSION_TTL_SECONDS = 24 * 60 * 60;
/** A token sign-in lives as long as its newest refresh token (REFRESH_TTL_SECONDS in jwt.ts), renewed by each refresh. */
const TOKENS_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** A cookie's use is written back at most this often: a write per request would cost more than the list is worth. */
const TOUCH_EVERY_MS = 5 * 60 * 1000;

export interface SignIn {
  id: string;
  userId: number;
  /** The login's time (ms): what "a recent login" is measured from (RECENT_AUTH_MS). */
  authTime: number;
}

/** What the owner sees of a sign-in in `GET /api/v1/sessions`. */
export interface SignInRecord {
  id: string;
  kind: SignInKind;
  createdAt: Date;
  lastUsedAt: Date;
  userAgent: string | null;
}

export interface StartedSignIn extends SignIn {
  /** The cookie's value (cookie sign-ins only): the one copy of the secret. */
  secret?: string;
}

export class SignInService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    /** SIGN_INS_MAX_PER_USER: beyond it a new login ends the user's oldest sign-in (SPEC §0.2). */
    private readonly maxPerUser: number = DEFAULT_STORE_BOUNDS.signInsPerUser,
  ) {}

  /**
   * Starts a sign-in for a login that verified the user at `tokenVersion`, or null when that version is gone: a
   * password change or reset, or a logout everywhere, committed between the password check and here. The row is
   * written only while the user's row still has that version, read `FOR SHARE`: a concurrent security event either
   * waits for this insert (and then revokes it) or has committed first (and this login is refused).
   */
  async start(user: { id: number; tokenVersion: number }, kind: SignInKind, userAgent: string | undefined): Promise<StartedSignIn | null> {
    const id = randomUUID();
    const now = this.clock.now();
    const secret = kind === 'cookie' ? randomSecret() : undefined;
    const expiresAt = new Date(now + (kind === 'cookie' ? SESSION_TTL_SECONDS * 1000 : TOKENS_TTL_MS));
    const agent = userAgent ? userAgent.slice(0, USER_AGENT_MAX) : null;
    const at = new Date(now);
    const rows = await this.prisma.$queryRaw<{ id: string }[]>(Prisma.sql`
      INSERT INTO sessions (id, user_id, kind, secret_hash, auth_time, user_agent, created_at, last_used_at, expires_at)
      SELECT ${id}, id, ${kind}::"SignInKind", ${secret === undefined ? null : sha256(secret)}, ${at}, ${agent}, ${at}, ${at}, ${expiresAt}
        FROM users WHERE id = ${user.id} AND token_version = ${user.tokenVersion}
         FOR SHARE
      RETURNING id`);
    if (rows.length === 0) return null;
    await this.keepNewest(user.id, at);
    return { id, userId: user.id, authTime: now, ...(secret === undefined ? {} : { secret }) };
  }

  /**
   * A user holds at most `maxPerUser` sign-ins: each login ends the oldest beyond it, and the user's expired ones (a
   * client logging in again and again, with a password it knows, grows nothing past that).
   */
  private async keepNewest(userId: number, now: Date): Promise<void> {
    await this.prisma.$executeRaw`
      DELETE FROM sessions WHERE user_id = ${userId} AND (expires_at <= ${now} OR id IN (
        SELECT id FROM sessions WHERE user_id = ${userId} ORDER BY created_at DESC, id DESC OFFSET ${this.maxPerUser}))`;
  }

  /** The live cookie sign-in of a cookie value, or null (unknown, ended or expired; an expired one is deleted). */
  async findCookie(secret: string): Promise<SignIn | null> {
    const row = await this.prisma.session.findUnique({ where: { secretHash: sha256(secret) } });
    if (!row) return null;
    const now = this.clock.now();
    if (row.expiresAt.getTime() <= now) {
      await this.prisma.session.deleteMany({ where: { id: row.id } });
      return null;
    }
    if (now - row.lastUsedAt.getTime() >= TOUCH_EVERY_MS) {
      await this.prisma.session.updateMany({ where: { id: row.id }, data: { lastUsedAt: new Date(now) } });
    }
    return { id: row.id, userId: row.userId, authTime: row.authTime.getTime() };
  }

  /** A token sign-in that is still live (its refresh token was just spent), renewed for another refresh-token lifetime. */
  async renewTokens(id: string): Promise<SignIn | null> {
    const now = this.clock.now();
    const rows = await this.prisma.session.updateManyAndReturn({
      where: { id, kind: 'tokens' },
      data: { lastUsedAt: new Date(now), expiresAt: new Date(now + TOKENS_TTL_MS) },
      select: { id: true, userId: true, authTime: true },
    });
    const row = rows[0];
    return row ? { id: row.id, userId: row.userId, authTime: row.authTime.getTime() } : null;
  }

  /**
   * Renews a sign-in after its owner proved the password again (a password change): a login of now, and for a cookie a
   * new secret (returned), so that a copy of the old cookie stops working.
   */
  async reauthenticated(id: string): Promise<{ authTime: number; secret?: string }> {
    const now = this.clock.now();
    const row = await this.prisma.session.findUnique({ where: { id }, select: { kind: true } });
    const secret = row?.kind === 'cookie' ? randomSecret() : undefined;
    await this.prisma.session.updateMany({
      where: { id },
      data: { authTime: new Date(now), lastUsedAt: new Date(now), ...(secret ? { secretHash: sha256(secret) } : {}) },
    });
    return { authTime: now, ...(secret ? { secret } : {}) };
  }

  /** The user's live sign-ins, newest first, and how many there are. */
  async list(userId: number, window: { limit: number; offset: number }): Promise<{ items: SignInRecord[]; total: number }> {
    const where = { userId, expiresAt: { gt: new Date(this.clock.now()) } };
    const select = { id: true, kind: true, createdAt: true, lastUsedAt: true, userAgent: true } as const;
    const [items, total] = await this.prisma.$transaction([
      this.prisma.session.findMany({ where, select, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: window.limit, skip: window.offset }),
      this.prisma.session.count({ where }),
    ]);
    return { items, total };
  }

  /** Ends one sign-in of `userId`; false when it has none with this id. Its refresh tokens go with it (cascade). */
  async end(id: string, userId: number): Promise<boolean> {
    const { count } = await this.prisma.session.deleteMany({ where: { id, userId } });
    return count === 1;
  }
}
