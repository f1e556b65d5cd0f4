// Server-side sessions: the `sid` cookie holds a random secret; the database holds its hash and expiry (1 day).
import type { PrismaClient } from '@users-posts/db';
import type { Clock } from '../clock.js';
import { randomSecret, sha256 } from '../hashing.js';

export const SESSION_COOKIE = 'sid';
export const SESSION_TTL_SECONDS = 24 * 60 * 60;

export class SessionService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
  ) {}

  /** Creates a session; returns the cookie value (the only copy of the secret). */
  async create(userId: number): Promise<string> {
    const secret = randomSecret();
    await this.prisma.session.create({
      data: { id: sha256(secret), userId, expiresAt: new Date(this.clock.now() + SESSION_TTL_SECONDS * 1000) },
    });
    return secret;
  }

  /** The live session of a cookie value, or null (unknown or expired; expired ones are deleted). */
  async find(secret: string): Promise<{ id: string; userId: number } | null> {
    const session = await this.prisma.session.findUnique({ where: { id: sha256(secret) } });
    if (!session) return null;
    if (session.expiresAt.getTime() <= this.clock.now()) {
      await this.prisma.session.deleteMany({ where: { id: session.id } });
      return null;
    }
    return { id: session.id, userId: session.userId };
  }

  async destroy(sessionId: string): Promise<void> {
    await this.prisma.session.deleteMany({ where: { id: sessionId } });
  }

  async destroyAllOf(userId: number): Promise<void> {
    await this.prisma.session.deleteMany({ where: { userId } });
  }
}
