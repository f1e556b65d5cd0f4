// Resolves a request's credentials (signature, Bearer, api_key, sid cookie — in that order) to one Principal.
import { PREPARED, type Database, type Role } from '@users-posts/db';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';
import type { Identity } from './identity.js';
import { anonymous, type Principal } from './principal.js';
import { SESSION_COOKIE } from './credentials/sign-ins.js';
import { isSignedRequest, verifySignedRequest } from './credentials/signature.js';

const unauthenticated = (message: string) => new AppError('UNAUTHENTICATED', message);

/**
 * The role and token version of the user behind a credential, read on every authenticated request: through the SQL
 * reader (one indexed read, no Prisma client query planning: ~0.1 ms less per authenticated request).
 */
async function userRole(db: Database, userId: number): Promise<{ role: Role; tokenVersion: number }> {
  const sql = 'SELECT role, token_version AS "tokenVersion" FROM users WHERE id = $1';
  const [user] = await db.sql.rows<{ role: Role; tokenVersion: number }>(sql, [userId], PREPARED);
  if (!user) throw unauthenticated('The user of these credentials no longer exists');
  return user;
}

/**
 * The same for an access token, with whether its sign-in still exists, in the same one indexed read: ending a sign-in
 * (DELETE /api/v1/sessions/{id}, logout, a security event) rejects its access tokens on the next request, on every
 * instance, without a blocklist.
 */
async function userOfSignIn(db: Database, userId: number, signInId: string): Promise<{ role: Role; tokenVersion: number; live: boolean }> {
  const sql =
    'SELECT role, token_version AS "tokenVersion", EXISTS (SELECT 1 FROM sessions WHERE id = $2 AND user_id = $1) AS live FROM users WHERE id = $1';
  const [user] = await db.sql.rows<{ role: Role; tokenVersion: number; live: boolean }>(sql, [userId, signInId], PREPARED);
  if (!user) throw unauthenticated('The user of these credentials no longer exists');
  return user;
}

/** Whether a login at `authTimeMs` is recent enough for a sensitive change (RECENT_AUTH_MS). */
const isRecent = (identity: Identity, authTimeMs: number) => identity.clock.now() - authTimeMs <= identity.recentAuthMs;

/** The token of an `Authorization` value of the form "Bearer <token>"; UNAUTHENTICATED for any other shape. */
export function bearerToken(authorization: string): string {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization);
  if (!match?.[1]) throw unauthenticated('Authorization must be "Bearer <access token>"');
  return match[1];
}

/**
 * The principal of an access token: signature and type verified (pinned HS256), not on the logout blocklist,
 * and issued for the user's current tokenVersion. Shared by HTTP requests and WebSocket `connectionParams`.
 */
export async function principalFromBearer(token: string, identity: Identity, db: Database): Promise<Principal> {
  const claims = identity.tokens.verifyAccess(token);
  if (await identity.stores.revocations.isRevoked(claims.jti, identity.clock.now())) throw unauthenticated('The access token was revoked');
  const user = await userOfSignIn(db, claims.userId, claims.sid);
  if (user.tokenVersion !== claims.ver || !user.live) throw unauthenticated('The access token was revoked');
  return {
    kind: 'user',
    userId: claims.userId,
    role: user.role,
    via: 'bearer',
    token: { jti: claims.jti, exp: claims.exp },
    signInId: claims.sid,
    recentLogin: isRecent(identity, claims.auth_time * 1000),
  };
}

/**
 * The principal of a request. Presenting a credential that does not verify is a 401 even on public routes
 * (seed §5 rule 2): a client learns at once that its token is bad instead of silently acting anonymously.
 * A request without credentials is answered at once (no promise): most reads are anonymous.
 */
export function authenticate(request: FastifyRequest, identity: Identity, db: Database): Principal | Promise<Principal> {
  // The signature covers the request target as the client sent it (before the /api → /api/v1 rewrite).
  if (isSignedRequest(request.originalUrl)) return principalFromSignature(request, identity);

  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    return principalFromBearer(bearerToken(authorization), identity, db);
  }

  const query = request.url.indexOf('?');
  const apiKey = query === -1 ? null : new URLSearchParams(request.url.slice(query + 1)).get('api_key');
  if (apiKey !== null) return principalFromApiKey(apiKey, identity, db);

  const sid = request.cookies[SESSION_COOKIE];
  if (sid) return principalFromSession(sid, identity, db);

  return anonymous;
}

async function principalFromSignature(request: FastifyRequest, identity: Identity): Promise<Principal> {
  await verifySignedRequest(
    { method: request.method, url: request.originalUrl, rawBody: request.rawBody },
    { secret: identity.signingSecret, nowMs: identity.clock.now(), nonces: identity.stores.nonces },
  );
  return { kind: 'service', role: 'ADMIN', via: 'signature' };
}

async function principalFromApiKey(apiKey: string, identity: Identity, db: Database): Promise<Principal> {
  const owner = await identity.apiKeys.verify(apiKey);
  if (!owner) throw unauthenticated('Invalid API key');
  const user = await userRole(db, owner.userId);
  return { kind: 'user', userId: owner.userId, role: user.role, via: 'api_key', recentLogin: false };
}

async function principalFromSession(sid: string, identity: Identity, db: Database): Promise<Principal> {
  const signIn = await identity.signIns.findCookie(sid);
  if (!signIn) throw unauthenticated('The session has expired or was ended; log in again');
  const user = await userRole(db, signIn.userId);
  return {
    kind: 'user',
    userId: signIn.userId,
    role: user.role,
    via: 'session',
    signInId: signIn.id,
    recentLogin: isRecent(identity, signIn.authTime),
  };
}
