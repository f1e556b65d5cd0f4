// Who may do what: 401 for nobody, 403 for too little, users versus the signed-request service, and acting for a user.
import { describe, expect, it } from '@jest/globals';
import { ErrorKinds } from '../errors/app-error.js';
import { anonymous, canActFor, requireAuthenticated, requireRole, requireUser, type Principal } from './principal.js';
import { refusal } from '../../test/support/refusal.js';

const user: Principal = { kind: 'user', userId: 7, role: 'USER', via: 'bearer', token: { jti: 'jti-7', exp: 1_700_000_900 }, recentLogin: true };
const admin: Principal = { kind: 'user', userId: 1, role: 'ADMIN', via: 'session', signInId: 'sign-in-1', recentLogin: true };
const apiKeyUser: Principal = { kind: 'user', userId: 8, role: 'USER', via: 'api_key', recentLogin: false };
const service: Principal = { kind: 'service', role: 'ADMIN', via: 'signature' };

const UNAUTHENTICATED = { kind: ErrorKinds.UNAUTHENTICATED, status: 401, message: 'Authentication required' };

describe('requireAuthenticated', () => {
  it('refuses nobody with 401', () => {
    expect(anonymous).toEqual({ kind: 'anonymous' });
    expect(refusal(() => requireAuthenticated(anonymous))).toMatchObject(UNAUTHENTICATED);
  });

  it('hands back the very caller for a user, an API key and the service', () => {
    for (const caller of [user, admin, apiKeyUser, service]) expect(requireAuthenticated(caller)).toBe(caller);
  });
});

describe('requireRole', () => {
  it('refuses nobody with 401, whatever the role asked', () => {
    expect(refusal(() => requireRole(anonymous, 'USER'))).toMatchObject(UNAUTHENTICATED);
    expect(refusal(() => requireRole(anonymous, 'ADMIN'))).toMatchObject(UNAUTHENTICATED);
  });

  it('attack: a USER asking for an ADMIN action is refused with 403 naming the role', () => {
    expect(refusal(() => requireRole(user, 'ADMIN'))).toMatchObject({ kind: ErrorKinds.FORBIDDEN, status: 403, message: 'Requires the ADMIN role' });
    expect(refusal(() => requireRole(apiKeyUser, 'ADMIN'))).toMatchObject({ kind: ErrorKinds.FORBIDDEN, message: 'Requires the ADMIN role' });
  });

  it('lets a role through to what it or a lower role may do', () => {
    expect(requireRole(user, 'USER')).toBe(user);
    expect(requireRole(admin, 'USER')).toBe(admin);
    expect(requireRole(admin, 'ADMIN')).toBe(admin);
    expect(requireRole(service, 'ADMIN')).toBe(service);
  });
});

describe('requireUser', () => {
  it('refuses nobody with 401 and the signed-request service (no user account) with 403', () => {
    expect(refusal(() => requireUser(anonymous))).toMatchObject(UNAUTHENTICATED);
    expect(refusal(() => requireUser(service))).toMatchObject({ kind: ErrorKinds.FORBIDDEN, status: 403, message: 'Requires a user account' });
  });

  it('hands back a user however they authenticated, with their token and session details', () => {
    expect(requireUser(user)).toEqual({
      kind: 'user',
      userId: 7,
      role: 'USER',
      via: 'bearer',
      token: { jti: 'jti-7', exp: 1_700_000_900 },
      recentLogin: true,
    });
    expect(requireUser(admin)).toBe(admin);
    expect(requireUser(apiKeyUser)).toBe(apiKeyUser);
  });
});

describe('canActFor', () => {
  it('lets a user act for themself only', () => {
    expect(canActFor(user, 7)).toBe(true);
    expect(canActFor(user, 8)).toBe(false);
    expect(canActFor(apiKeyUser, 7)).toBe(false);
  });

  it('lets an ADMIN, and the ADMIN service, act for anyone', () => {
    for (const id of [1, 7, 999]) {
      expect(canActFor(admin, id)).toBe(true);
      expect(canActFor(service, id)).toBe(true);
    }
  });

  it('attack: nobody may act for anyone, not even for a guessed id', () => {
    for (const id of [0, 1, 7, NaN]) expect(canActFor(anonymous, id)).toBe(false);
  });
});
