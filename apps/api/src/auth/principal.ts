// Who is calling: resolved once per request, then asked by every protected REST route and GraphQL field.
import type { Role } from '@users-posts/db';
import { AppError } from '../errors/app-error.js';

export type CredentialKind = 'bearer' | 'session' | 'api_key' | 'signature';

export type Principal =
  | { kind: 'anonymous' }
  | {
      kind: 'user';
      userId: number;
      role: Role;
      via: Exclude<CredentialKind, 'signature'>;
      /** Access-token id and expiry (seconds), for the logout blocklist. */
      token?: { jti: string; exp: number };
      /** The sign-in behind a Bearer token or the session cookie (credentials/sign-ins.ts); none for an API key. */
      signInId?: string;
      /**
       * Whether that sign-in's login is at most RECENT_AUTH_MS old (SPEC §3.2), judged when the credential was verified.
       * Never for an API key: a key cannot mint keys or change the e-mail.
       */
      recentLogin: boolean;
    }
  | { kind: 'service'; role: 'ADMIN'; via: 'signature' };

export type AuthenticatedPrincipal = Exclude<Principal, { kind: 'anonymous' }>;

export const anonymous: Principal = { kind: 'anonymous' };

const RANK: Record<Role, number> = { USER: 1, ADMIN: 2 };

/** The caller, or 401 when nobody is logged in. */
export function requireAuthenticated(principal: Principal): AuthenticatedPrincipal {
  if (principal.kind === 'anonymous') throw new AppError('UNAUTHENTICATED');
  return principal;
}

/** The caller holding at least `role`, else 401 (nobody) or 403 (too little). */
export function requireRole(principal: Principal, role: Role): AuthenticatedPrincipal {
  const caller = requireAuthenticated(principal);
  if (RANK[caller.role] < RANK[role]) throw new AppError('FORBIDDEN', `Requires the ${role} role`);
  return caller;
}

/** A caller that is a user (not the signed-request service principal). */
export function requireUser(principal: Principal): Extract<Principal, { kind: 'user' }> {
  const caller = requireAuthenticated(principal);
  if (caller.kind !== 'user') throw new AppError('FORBIDDEN', 'Requires a user account');
  return caller;
}

/** A user whose login is recent (sensitive changes: API keys, one's own e-mail), else 403 40301 (REAUTHENTICATION_REQUIRED). */
export function requireRecentLogin(principal: Principal): void {
  if (principal.kind === 'user' && !principal.recentLogin) throw new AppError('REAUTHENTICATION_REQUIRED');
}

/** Whether the caller may act on `userId`'s own data: that user, or an ADMIN. */
export function canActFor(principal: Principal, userId: number): boolean {
  return principal.kind !== 'anonymous' && (principal.role === 'ADMIN' || (principal.kind === 'user' && principal.userId === userId));
}
