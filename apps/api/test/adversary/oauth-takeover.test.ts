// Account takeover through OpenID linking: an attacker claims the victim's address here (sign-up or e-mail change;
// nothing verifies it), then waits for the victim's first OpenID login. Proves it is refused and nothing changes.
import { describe, expect, it } from '@jest/globals';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { hashPassword } from '../../src/auth/credentials/passwords.js';
import { ensureAdmin } from '../../src/bootstrap/admin.js';
import { LocalOidcProvider, useOidcApp } from '../support/oidc.js';

const TX_COOKIE = 'oauth_tx';
const PASSWORD = 'attacker-password-1';

let provider: LocalOidcProvider;
let app: FastifyInstance;
let seq = 0;

useOidcApp((started) => ({ provider, app } = started));

const unique = (name: string) => `${name}${++seq}@example.com`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The whole browser flow; `headers` go with the authorize request (the signed-in owner of a link flow). */
async function oidcLogin(claims: Record<string, unknown>, query = '', headers: Record<string, string> = {}, cookies: Record<string, string> = {}) {
  provider.claims = claims;
  const start = await app.inject({ method: 'GET', url: `/auth/oauth/local/authorize${query}`, headers, cookies });
  if (start.statusCode !== 302) return start;
  const tx = start.cookies.find((c) => c.name === TX_COOKIE)!.value;
  const redirect = await provider.authorize(start.headers.location as string);
  return app.inject({ method: 'GET', url: `${redirect.pathname}${redirect.search}`, cookies: { [TX_COOKIE]: tx } });
}
const victimClaims = (email: string, sub = `victim-sub-${++seq}`) => ({ sub, email, email_verified: true, name: 'Victim' });

async function signUpRest(email: string) {
  const response = await app.inject({ method: 'POST', url: '/api/v1/users', payload: { name: 'Attacker', email, password: PASSWORD } });
  expect(response.statusCode).toBe(201);
  return (response.json() as { data: { id: number } }).data.id;
}
async function signUpGraphql(email: string) {
  const response = await app.inject({
    method: 'POST',
    url: '/graphql',
    payload: {
      query: 'mutation($input: CreateUserInput!) { createUser(input: $input) { id } }',
      variables: { input: { name: 'Attacker', email, password: PASSWORD } },
    },
  });
  expect(response.json()).not.toHaveProperty('errors');
  return Number(response.json().data.createUser.id);
}
async function passwordLogin(email: string) {
  const response = await app.inject({ method: 'POST', url: '/login', payload: { email, password: PASSWORD } });
  expect(response.statusCode).toBe(200);
  return response.json() as { accessToken: string; refreshToken: string };
}
const snapshot = async (id: number) => {
  const { prisma } = app.db;
  return {
    user: await prisma.user.findUniqueOrThrow({ where: { id } }),
    accounts: await prisma.oAuthAccount.count(),
    users: await prisma.user.count(),
  };
};
/** Refused: 409 in the envelope, the message names the link flow, no tokens, no cookie session. */
function expectLinkRefused(response: LightMyRequestResponse) {
  expect(response.statusCode).toBe(409);
  expect(response.json()).toEqual({ code: 40900, message: expect.stringContaining('/auth/oauth/local/authorize?link=true') });
  expect(response.cookies.find((c) => c.name === 'sid' && c.value)).toBeUndefined();
}
const userIdOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).userId as number;

describe("attacker pre-registers the victim's address, the victim then logs in through OpenID", () => {
  it.each([
    ['REST sign-up', signUpRest],
    ['GraphQL sign-up', signUpGraphql],
  ])("%s: the victim gets 409, no identity is linked, the attacker's account and password gain nothing", async (_door, signUp) => {
    const email = unique('victim');
    const attackerId = await signUp(email);
    const before = await snapshot(attackerId);

    const response = await oidcLogin(victimClaims(email));
    expectLinkRefused(response);
    expect(await snapshot(attackerId)).toEqual(before); // no OAuthAccount, no user, the attacker's row untouched
    expect(await app.db.prisma.oAuthAccount.count({ where: { userId: attackerId } })).toBe(0);

    // The attacker's password login is the attacker's account, nothing more: no OpenID identity to ride on.
    const attacker = await passwordLogin(email);
    expect(userIdOf(attacker.accessToken)).toBe(attackerId);
    const me = await app.inject({ method: 'GET', url: `/api/v1/users/${attackerId}`, headers: bearer(attacker.accessToken) });
    expect(me.json().data).toMatchObject({ id: attackerId, name: 'Attacker' });
    // A second attempt is refused the same way (nothing was half-linked by the first).
    expectLinkRefused(await oidcLogin(victimClaims(email)));
  });

  it("attacker changes their own e-mail to the victim's: 409 for the victim, nothing linked", async () => {
    const attackerId = await signUpRest(unique('attacker'));
    const { accessToken } = await passwordLogin((await snapshot(attackerId)).user.email);
    const email = unique('victim');
    const patch = await app.inject({ method: 'PATCH', url: `/api/v1/users/${attackerId}`, headers: bearer(accessToken), payload: { email } });
    expect(patch.statusCode).toBe(200);
    const before = await snapshot(attackerId);

    expectLinkRefused(await oidcLogin(victimClaims(email)));
    expect(await snapshot(attackerId)).toEqual(before);
  });
});

describe("the ADMIN's address", () => {
  it('is never linked automatically, even when this service verified it', async () => {
    const email = unique('admin');
    const admin = await app.db.prisma.user.create({ data: { name: 'Admin', email, role: 'ADMIN', emailVerifiedAt: new Date() } });
    const before = await snapshot(admin.id);
    expectLinkRefused(await oidcLogin(victimClaims(email)));
    expect(await snapshot(admin.id)).toEqual(before);
  });

  it('a verified USER promoted to ADMIN is no longer linked automatically', async () => {
    const email = unique('promoted');
    expect((await oidcLogin(victimClaims(email))).statusCode).toBe(200); // created by OpenID: verified
    const user = await app.db.prisma.user.update({ where: { email }, data: { role: 'ADMIN' } });
    const before = await snapshot(user.id);
    expectLinkRefused(await oidcLogin(victimClaims(email, 'another-provider-sub')));
    expect(await snapshot(user.id)).toEqual(before);
  });
});

describe('an e-mail change clears verification', () => {
  it('an OpenID-created account that changes its e-mail is not auto-linked under the new address', async () => {
    const first = unique('owner');
    const created = await oidcLogin(victimClaims(first));
    expect(created.statusCode).toBe(200);
    const { accessToken } = created.json() as { accessToken: string };
    const id = userIdOf(accessToken);
    // Verified under its first address: a second identity with it links automatically.
    expect((await oidcLogin(victimClaims(first))).statusCode).toBe(200);

    const second = unique('changed');
    const patch = await app.inject({ method: 'PATCH', url: `/api/v1/users/${id}`, headers: bearer(accessToken), payload: { email: second } });
    expect(patch.statusCode).toBe(200);
    expect((await app.db.prisma.user.findUniqueOrThrow({ where: { id } })).emailVerifiedAt).toBeNull();
    const before = await snapshot(id);
    expectLinkRefused(await oidcLogin(victimClaims(second)));
    expect(await snapshot(id)).toEqual(before);
  });

  it('PUT with the same e-mail keeps the verification (only a change clears it)', async () => {
    const email = unique('same');
    const { accessToken } = (await oidcLogin(victimClaims(email))).json() as { accessToken: string };
    const id = userIdOf(accessToken);
    const put = await app.inject({ method: 'PUT', url: `/api/v1/users/${id}`, headers: bearer(accessToken), payload: { name: 'Renamed', email } });
    expect(put.statusCode).toBe(200);
    expect((await app.db.prisma.user.findUniqueOrThrow({ where: { id } })).emailVerifiedAt).not.toBeNull();
  });
});

describe('the authenticated link flow', () => {
  it('links the identity to the signed-in owner (Bearer), who can then log in through OpenID', async () => {
    const email = unique('owner');
    const ownerId = await signUpRest(email); // a password account: never linked automatically
    const owner = await passwordLogin(email);
    const claims = victimClaims(email);
    expectLinkRefused(await oidcLogin(claims));

    const linked = await oidcLogin(claims, '?link=true', bearer(owner.accessToken));
    expect(linked.statusCode).toBe(200);
    expect(userIdOf(linked.json().accessToken)).toBe(ownerId);
    const account = await app.db.prisma.oAuthAccount.findUniqueOrThrow({ where: { provider_subject: { provider: 'local', subject: claims.sub } } });
    expect(account.userId).toBe(ownerId);
    // The provider verified the owner's own address: this service now knows it is verified.
    expect((await app.db.prisma.user.findUniqueOrThrow({ where: { id: ownerId } })).emailVerifiedAt).not.toBeNull();

    const again = await oidcLogin(claims);
    expect(again.statusCode).toBe(200);
    expect(userIdOf(again.json().accessToken)).toBe(ownerId);
  });

  it('works with the session cookie, and links an ADMIN who asks for it', async () => {
    const email = unique('admin-owner');
    const admin = await app.db.prisma.user.create({ data: { name: 'Admin', email, role: 'ADMIN', passwordHash: await hashPassword(PASSWORD) } });
    const login = await app.inject({ method: 'POST', url: '/login', payload: { email, password: PASSWORD, session: true } });
    const sid = login.cookies.find((c) => c.name === 'sid')!.value;

    const linked = await oidcLogin(victimClaims(email), '?link=true', {}, { sid });
    expect(linked.statusCode).toBe(200);
    expect(userIdOf(linked.json().accessToken)).toBe(admin.id);
  });

  it('without credentials → 401 and no transaction is started', async () => {
    const response = await app.inject({ method: 'GET', url: '/auth/oauth/local/authorize?link=true' });
    expect(response.statusCode).toBe(401);
    expect(response.cookies.find((c) => c.name === TX_COOKIE)).toBeUndefined();
  });

  it('with an API key (or a signed request) → 403: a leaked key cannot attach a lasting login', async () => {
    const email = unique('keyholder');
    await signUpRest(email);
    const { accessToken } = await passwordLogin(email);
    const created = await app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: bearer(accessToken), payload: { name: 'ci' } });
    const key = (created.json().data ?? created.json()).key as string;
    const response = await app.inject({ method: 'GET', url: `/auth/oauth/local/authorize?link=true&api_key=${encodeURIComponent(key)}` });
    expect(response.statusCode).toBe(403);
    expect(response.cookies.find((c) => c.name === TX_COOKIE)).toBeUndefined();
  });

  it("signed in as A, the identity of B's address is attached to A only — never to B", async () => {
    const emailA = unique('a');
    const emailB = unique('b');
    const idA = await signUpRest(emailA);
    const idB = await signUpRest(emailB);
    const a = await passwordLogin(emailA);
    const beforeB = await snapshot(idB);

    const claims = victimClaims(emailB);
    const linked = await oidcLogin(claims, '?link=true', bearer(a.accessToken));
    expect(linked.statusCode).toBe(200);
    expect(userIdOf(linked.json().accessToken)).toBe(idA);
    expect(await app.db.prisma.oAuthAccount.count({ where: { userId: idB } })).toBe(0);
    expect((await snapshot(idB)).user).toEqual(beforeB.user);
    // B's address on A's identity does not verify A's own address.
    expect((await app.db.prisma.user.findUniqueOrThrow({ where: { id: idA } })).emailVerifiedAt).toBeNull();
  });

  it('an identity already linked to another user → 409, the link stays where it was', async () => {
    const emailA = unique('a');
    const emailC = unique('c');
    const idA = await signUpRest(emailA);
    await signUpRest(emailC);
    const a = await passwordLogin(emailA);
    const c = await passwordLogin(emailC);
    const claims = victimClaims(emailA);
    expect((await oidcLogin(claims, '?link=true', bearer(a.accessToken))).statusCode).toBe(200);

    const stolen = await oidcLogin(claims, '?link=true', bearer(c.accessToken));
    expect(stolen.statusCode).toBe(409);
    expect(stolen.json()).toMatchObject({ code: 40900 });
    const account = await app.db.prisma.oAuthAccount.findUniqueOrThrow({ where: { provider_subject: { provider: 'local', subject: claims.sub } } });
    expect(account.userId).toBe(idA);
  });

  it('a link started by another site with the session cookie (a cross-site navigation) is refused; nothing is linked', async () => {
    const email = unique('lured');
    await signUpRest(email);
    const login = await app.inject({ method: 'POST', url: '/login', payload: { email, password: PASSWORD, session: true } });
    const sid = login.cookies.find((c) => c.name === 'sid')!.value;
    const before = await app.db.prisma.oAuthAccount.count();
    const response = await app.inject({
      method: 'GET',
      url: '/auth/oauth/local/authorize?link=true',
      cookies: { sid },
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    expect(response.statusCode).toBe(403);
    expect(response.cookies.find((c) => c.name === TX_COOKIE)).toBeUndefined();
    expect(await app.db.prisma.oAuthAccount.count()).toBe(before);
  });

  it('the link target is sealed in the signed transaction: editing the cookie is refused', async () => {
    const email = unique('forger');
    await signUpRest(email);
    const forger = await passwordLogin(email);
    const start = await app.inject({ method: 'GET', url: '/auth/oauth/local/authorize?link=true', headers: bearer(forger.accessToken) });
    const raw = start.cookies.find((c) => c.name === TX_COOKIE)!.value;
    const [payload, signature] = [raw.slice(0, raw.lastIndexOf('.')), raw.slice(raw.lastIndexOf('.') + 1)];
    const tx = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const edited = `${Buffer.from(JSON.stringify({ ...tx, linkUserId: 1 })).toString('base64url')}.${signature}`;
    provider.claims = victimClaims(unique('x'));
    const redirect = await provider.authorize(start.headers.location as string);
    const before = await app.db.prisma.oAuthAccount.count();
    const response = await app.inject({ method: 'GET', url: `${redirect.pathname}${redirect.search}`, cookies: { [TX_COOKIE]: edited } });
    expect(response.statusCode).toBe(401);
    expect(await app.db.prisma.oAuthAccount.count()).toBe(before);
  });
});

describe('pre-registering the ADMIN_EMAIL address before the operator configures it', () => {
  it('the start-up promotion ends every credential the squatter holds; only ADMIN_PASSWORD logs in', async () => {
    const email = unique('future-admin');
    const squatterId = await signUpRest(email);
    const squatter = await passwordLogin(email);
    const key = await app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: bearer(squatter.accessToken), payload: { name: 'kept' } });
    expect(key.statusCode).toBe(201);
    const apiKey = (key.json().data ?? key.json()).key as string;
    const linked = await oidcLogin(victimClaims(unique('squatter-idp')), '?link=true', bearer(squatter.accessToken));
    expect(linked.statusCode).toBe(200);

    // What start-up runs when ADMIN_EMAIL is set.
    expect(await ensureAdmin(app.db.prisma, { email, password: 'operator-password-1' })).toBe(squatterId);

    const asAdmin = (headers: Record<string, string>, url = '/api/v1/users/batch') =>
      app.inject({ method: 'POST', url, headers, payload: { users: [{ name: 'X', email: unique('x') }] } });
    expect((await asAdmin(bearer(squatter.accessToken))).statusCode).toBe(401);
    expect((await asAdmin({}, `/api/v1/users/batch?api_key=${encodeURIComponent(apiKey)}`)).statusCode).toBe(401);
    expect((await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refreshToken: squatter.refreshToken } })).statusCode).toBe(401);
    expect((await app.inject({ method: 'POST', url: '/login', payload: { email, password: PASSWORD } })).statusCode).toBe(401);
    expect(await app.db.prisma.oAuthAccount.count({ where: { userId: squatterId } })).toBe(0);
  });
});
