// Access and refresh JWTs (@fastify/jwt): HS256 pinned, separate secrets, `type` claims never interchangeable.
import fastifyJwt from '@fastify/jwt';
import type { FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import { AppError } from '../../errors/app-error.js';
import type { Secrets } from '../../config/secrets.js';
import { systemClock, type Clock } from '../clock.js';

declare module '@fastify/jwt' {
  interface FastifyJWT {
    namespaces: 'access' | 'refresh';
  }
}

export const ACCESS_TTL_SECONDS = 15 * 60;
export const REFRESH_TTL_SECONDS = 7 * 24 * 60 * 60;

export interface AccessClaims {
  userId: number;
  type: 'access';
  /** The user's tokenVersion when issued; a bump revokes every access token. */
  ver: number;
  /** The sign-in it was issued under (credentials/sign-ins.ts): ending that sign-in rejects the token at once. */
  sid: string;
  /** When the login that started the sign-in happened (seconds, OIDC's claim name), kept across refreshes. */
  auth_time: number;
  jti: string;
  iat: number;
  exp: number;
}

export interface RefreshClaims {
  userId: number;
  type: 'refresh';
  jti: string;
  iat: number;
  exp: number;
}

export interface SignedToken {
  token: string;
  jti: string;
  /** Expiry, milliseconds since the epoch. */
  expiresAt: number;
}

/**
 * Registers both namespaces; `algorithms: ['HS256']` on verify rejects `none` and every other algorithm, and
 * `requiredClaims: ['exp']` rejects a token that would never expire (fast-jwt otherwise accepts one without `exp`).
 */
export async function registerJwt(app: FastifyInstance, secrets: Secrets): Promise<void> {
  const pinned = { sign: { algorithm: 'HS256' as const }, verify: { algorithms: ['HS256' as const], requiredClaims: ['exp'] } };
  await app.register(fastifyJwt, { namespace: 'access', secret: secrets.jwtAccess, ...pinned });
  await app.register(fastifyJwt, { namespace: 'refresh', secret: secrets.jwtRefresh, ...pinned });
}

const invalid = (message: string) => new AppError('UNAUTHENTICATED', message);

/** Signs and verifies both kinds of token against the injected clock. */
export class TokenCodec {
  constructor(
    private readonly app: FastifyInstance,
    private readonly clock: Clock = systemClock,
  ) {}

  /** fast-jwt takes `clockTimestamp` per call; the system clock keeps the cached signer and verifier. */
  private timing() {
    return this.clock === systemClock ? undefined : { clockTimestamp: this.clock.now() };
  }

  signAccess(userId: number, tokenVersion: number, signIn: { id: string; authTime: number }): SignedToken {
    const jti = randomUUID();
    const token = this.app.jwt.access.sign(
      { userId, type: 'access', ver: tokenVersion, sid: signIn.id, auth_time: Math.floor(signIn.authTime / 1000), jti },
      // A string: @fastify/jwt reads a numeric expiresIn as seconds, fast-jwt as milliseconds.
      { expiresIn: `${ACCESS_TTL_SECONDS}s`, ...this.timing() },
    );
    return { token, jti, expiresAt: this.clock.now() + ACCESS_TTL_SECONDS * 1000 };
  }

  signRefresh(userId: number): SignedToken {
    const jti = randomUUID();
    const token = this.app.jwt.refresh.sign({ userId, type: 'refresh', jti }, { expiresIn: `${REFRESH_TTL_SECONDS}s`, ...this.timing() });
    return { token, jti, expiresAt: this.clock.now() + REFRESH_TTL_SECONDS * 1000 };
  }

  verifyAccess(token: string): AccessClaims {
    const claims = this.verify(() => this.app.jwt.access.verify<AccessClaims>(token, this.timing() ?? {}), 'access token');
    if (claims.type !== 'access') throw invalid('Not an access token');
    // A token of before sign-ins (no `sid`) cannot be checked against one: its client refreshes, as after any expiry.
    if (typeof claims.sid !== 'string' || !Number.isSafeInteger(claims.auth_time)) throw invalid('Invalid access token');
    return claims;
  }

  verifyRefresh(token: string): RefreshClaims {
    const claims = this.verify(() => this.app.jwt.refresh.verify<RefreshClaims>(token, this.timing() ?? {}), 'refresh token');
    if (claims.type !== 'refresh') throw invalid('Not a refresh token');
    return claims;
  }

  private verify<Claims extends { userId: unknown; jti: unknown; exp: unknown }>(run: () => Claims, what: string): Claims {
    let claims: Claims;
    try {
      claims = run();
    } catch (error) {
      const code = (error as { code?: string }).code ?? '';
      throw invalid(/EXPIRED/.test(code) ? `The ${what} has expired` : `Invalid ${what}`);
    }
    // `exp` again here: the rule must hold even if a per-call option ever replaced the registered verify options.
    if (!Number.isSafeInteger(claims.userId) || typeof claims.jti !== 'string' || typeof claims.exp !== 'number') {
      throw invalid(`Invalid ${what}`);
    }
    return claims;
  }
}
