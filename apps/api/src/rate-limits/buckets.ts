// The rate-limit buckets of SPEC §3.2–§4 beyond the default one, in one place that neither door owns: the REST routes
// declare them (rest/route-options.ts), GraphQL's createUser on every transport and the OpenID first login use up the
// sign-up bucket, and the limiter (plugins/rate-limit.ts) counts them.
import type { OperationId } from '@users-posts/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sha256 } from '../auth/hashing.js';
import { clientAddress } from '../http/client-address.js';
import type { Config } from '../config/config.js';
import type { RateBucket } from '../http/rate-bucket.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** POST /login checked a password and it was wrong: what the per-account guard counts (SPEC §3.3). */
    passwordRefused?: boolean;
  }
}

const MINUTE_MS = 60_000;
/** How long an address the owner logged in from stays exempt from the per-account guard. */
export const KNOWN_LOGIN_TTL_MS = 30 * 24 * 60 * MINUTE_MS;
const HOUR_MS = 60 * MINUTE_MS;

/** The login e-mail as the account key (lower-cased: e-mails are matched case-insensitively). */
function loginEmail(request: FastifyRequest): string {
  const email = (request.body as { email?: unknown } | undefined)?.email;
  return typeof email === 'string' ? email.trim().toLowerCase() : '';
}

/**
 * The three login buckets (SPEC §4), all counted on top of the default bucket:
 * - per address and e-mail (`loginMax`/min, every attempt): one client guessing one account;
 * - per address across e-mails (`loginIpMax`/min, every attempt): credential spraying from one address;
 * - per account across addresses (`loginAccount`, failed attempts only): a botnet guessing one account. Only failures
 *   count so that the owner's own sign-ins never use it up; once exceeded the account refuses every login (also the
 *   right password: otherwise the guessing would go on) until the window ends. That lock-out is the back-off, and it
 *   is deliberately fixed, not growing: @fastify/rate-limit's `exponentialBackoff` doubles the window with every
 *   further attempt (unbounded), which would let an attacker lock the real owner out for as long as they keep trying.
 *   Refused attempts are not failures, so an attacker cannot extend the lock-out: it lasts at most one window.
 */
export function loginBuckets(rateLimits: Config['rateLimits']): RateBucket[] {
  // The per-address bucket first: a bucket after a refusing one is not counted (plugins/rate-limit.ts), so the keys made
  // of the body's e-mail grow only by what this address may send (SPEC §0.2).
  return [
    { name: 'login-ip', max: rateLimits.loginIpMax, windowMs: MINUTE_MS, key: clientAddress },
    { name: 'login', max: rateLimits.loginMax, windowMs: MINUTE_MS, key: (request) => `${clientAddress(request)}|${loginEmail(request)}` },
    loginAccountBucket(rateLimits),
  ];
}

/** An (account, client address) pair, hashed: the key of the known-login store. */
export const knownLoginKeyOf = (email: string, request: FastifyRequest) => sha256(`${email.trim().toLowerCase()}|${clientAddress(request)}`);
/** The pair of a login attempt (its body's e-mail). */
export const knownLoginKey = (request: FastifyRequest) => knownLoginKeyOf(loginEmail(request), request);

/**
 * Failed logins per account (the e-mail) across addresses (SPEC §3.3): only a password checked and refused counts (a
 * bad credential header is the address's failure, not a guess at the account); once over the limit the account
 * refuses logins from addresses its owner has not logged in from within KNOWN_LOGIN_TTL_MS, never from those, so no
 * set of addresses can keep the owner out of an account from where they use it. From anywhere else, each refusal
 * offers a link mailed to the account (auth/address-trust.ts) that makes the address it is opened from known. Also
 * used up by a wrong current password on a password change.
 */
export const loginAccountBucket = (rateLimits: Config['rateLimits']): RateBucket => ({
  name: 'login-account',
  max: rateLimits.loginAccount.max,
  windowMs: rateLimits.loginAccount.windowMs,
  key: loginEmail,
  countOnlyStatus: 401,
  countOnlyIf: (request) => request.passwordRefused === true,
  exemptIf: (request) => request.server.identity.stores.knownLogins.has(knownLoginKey(request)),
  // The owner's way in from a new address (SPEC §3.3): a link mailed to the account, which lets in where it is opened.
  refusal: (request) => request.server.addressTrust.refuse(loginEmail(request)),
});

/**
 * The account lifecycle's buckets (SPEC §3.2), documented on each operation: reset mail per address asked for and per
 * client (no one floods an inbox, nor probes many addresses); token guesses per client, reset, verification and
 * address-trust links counted together; verification mail per user.
 */
export function accountBuckets(rateLimits: Config['rateLimits']): Partial<Record<OperationId, RateBucket[]>> {
  const tokenGuesses: RateBucket = { name: 'account-token', max: rateLimits.accountTokenMax, windowMs: 15 * MINUTE_MS, key: clientAddress };
  return {
    // Per address first, as the login's (loginBuckets): the per-e-mail keys grow only by what the address may ask.
    forgotPassword: [
      { name: 'forgot-ip', max: rateLimits.forgotIpMax, windowMs: HOUR_MS, key: clientAddress },
      { name: 'forgot-email', max: rateLimits.forgotEmailMax, windowMs: HOUR_MS, key: loginEmail },
    ],
    resetPassword: [tokenGuesses],
    verifyEmail: [tokenGuesses],
    trustLoginAddress: [tokenGuesses],
    resendVerification: [{ name: 'verify-resend', max: rateLimits.verifyResendMax, windowMs: HOUR_MS, key: (request) => principalKey(request) }],
  };
}

/** The verified caller as a bucket key (these routes require one; the address when not). */
const principalKey = (request: FastifyRequest) =>
  request.principal.kind === 'user' ? `user:${request.principal.userId}` : `address:${clientAddress(request)}`;

/** Accounts created per client address (SPEC §4 sign-up bucket), used up once per account by the REST and GraphQL handlers. */
export const signupBucket = (rateLimits: Config['rateLimits']): RateBucket => ({
  name: 'signup',
  max: rateLimits.signup.max,
  windowMs: rateLimits.signup.windowMs,
  key: clientAddress,
});

/**
 * Uses up one account of the sign-up bucket for a client (throws RATE_LIMITED when exceeded, before anything is
 * written): an HTTP request, or the address of a WebSocket (the same key, the client address under TRUST_PROXY, so one
 * address has one budget whatever the transport). Called once per account created by REST `POST /users`, GraphQL
 * `createUser` (HTTP and WebSocket, aliases and batched operations each count) and an OpenID Connect first login;
 * ADMIN batch creation (`POST /users/batch`) does not.
 */
export function consumeSignup(app: FastifyInstance, client: FastifyRequest | { address: string }): Promise<void> {
  return app.consumeRateLimit(signupBucket(app.config.rateLimits), 'raw' in client ? client : { key: client.address });
}
