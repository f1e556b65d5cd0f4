// Attack: keeping an account's owner out from an address they never used (issue 40, item 3; SPEC §3.3). After 40
// failed logins spread over 8 addresses, the owner's right password from a ninth got 429 with `Retry-After: 899`: only
// addresses the owner had logged in from were let past the per-account guard. Now each refusal by the guard mails the
// account's address a link (at most 3 an hour) that lets the address it is opened from in; the password is still
// needed, and the answer is the same for a right or wrong password and for an account that does not exist.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { GUARD_REFUSAL_MESSAGE, MAILS_PER_WINDOW } from '../../src/auth/address-trust.js';
import { createTestApp } from '../support/app.js';
import { createUser, type TestUser } from '../support/auth.js';
import { SmtpSink, tokenIn, type ReceivedMail } from '../support/smtp.js';

const WRONG = 'not the password at all';
const GUARD_MAX = 30; // failed logins per account per 15 minutes (SPEC §4 defaults, test/support/config.ts)

let app: FastifyInstance;
let smtp: SmtpSink;
beforeAll(async () => {
  smtp = await SmtpSink.start();
  // Behind a proxy that appends the client address to X-Forwarded-For: each request may come from its own address.
  app = await createTestApp({
    trustProxy: true,
    mail: { smtpUrl: smtp.url, from: 'Users & Posts <no-reply@users-posts.test>', publicUrl: 'https://app.users-posts.test' },
  });
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const login = (address: string, email: string, password: string) =>
  app.inject({ method: 'POST', url: '/login', payload: { email, password }, headers: { 'x-forwarded-for': address } });
const followLink = (address: string, token: string) =>
  app.inject({ method: 'POST', url: '/auth/login/trust-address', payload: { token }, headers: { 'x-forwarded-for': address } });

/**
 * `attempts` wrong passwords for `email`, one after another, spread round-robin over `addresses` addresses of `subnet`
 * (each attack its own subnet: the addresses' own buckets, 20 attempts a minute, never come into play).
 */
async function spreadAttack(email: string, addresses: number, attempts: number, subnet: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let n = 0; n < attempts; n++) statuses.push((await login(`${subnet}.${(n % addresses) + 1}`, email, WRONG)).statusCode);
  return statuses;
}
const repeat = (n: number, status: number) => Array.from({ length: n }, () => status);

function expectGuardRefusal(response: LightMyRequestResponse) {
  expect(response.statusCode).toBe(429);
  expect(response.json()).toEqual({ code: 42900, message: GUARD_REFUSAL_MESSAGE });
  // The account's window, not an address's minute: without the link this owner would wait up to 15 minutes.
  expect(Number(response.headers['retry-after'])).toBeGreaterThan(60);
}

/** Every link mailed so far to `email`, once the offers made so far were mailed (or refused by the budget). */
async function linksTo(email: string): Promise<ReceivedMail[]> {
  await app.addressTrust.idle();
  return smtp.mailTo(email);
}

const tokensIssued = (user: TestUser) => app.db.prisma.refreshToken.count({ where: { userId: user.id } });

describe.each([8, 64])('attack: wrong passwords spread over %i addresses, then the owner from an address never seen', (addresses) => {
  let owner: TestUser;
  beforeAll(async () => {
    owner = await createUser(app, { email: `owner-${addresses}@example.com` });
  });

  it('the guard holds against the attack (30 failures, then refusals) and the attack issues nothing', async () => {
    const attempts = Math.max(40, addresses);
    expect(await spreadAttack(owner.email, addresses, attempts, '203.0.113')).toEqual([
      ...repeat(GUARD_MAX, 401),
      ...repeat(attempts - GUARD_MAX, 429),
    ]);
    expect(await tokensIssued(owner)).toBe(0);
  });

  it('the owner’s right password from a new address: 429 that says a link was mailed; the mail is in the owner’s inbox', async () => {
    expectGuardRefusal(await login('192.0.2.200', owner.email, owner.password));
    const mails = await linksTo(owner.email);
    // The attack's own refusals set off links too: within the budget, and every one of them is the owner's to use.
    expect(mails).toHaveLength(MAILS_PER_WINDOW);
    for (const mail of mails) {
      expect(mail.subject).toBe('A login to your account from a new address');
      expect(mail.text).toContain('https://app.users-posts.test/trust-address#token=');
    }
  });

  it('following the link from that address, then the right password: 200 at once, without waiting for any window', async () => {
    const token = tokenIn(smtp.mailTo(owner.email).at(-1)!);
    const followed = await followLink('192.0.2.200', token);
    expect(followed.statusCode).toBe(204);
    expect(followed.headers['set-cookie']).toBeUndefined(); // the link logs nobody in
    const back = await login('192.0.2.200', owner.email, owner.password);
    expect(back.statusCode).toBe(200);
    expect(back.json()).toMatchObject({ success: true, accessToken: expect.any(String) });
  });

  it('the attack goes on: its addresses are still refused, the owner’s vouched address still gets in', async () => {
    expectGuardRefusal(await login('203.0.113.1', owner.email, owner.password));
    expect((await login('192.0.2.200', owner.email, owner.password)).statusCode).toBe(200);
  });
});

describe('the owner’s own refused attempt sets the link off', () => {
  it('after exactly 30 failures over 8 addresses (no refusal yet), the owner’s attempt mails the first link', async () => {
    const owner = await createUser(app, { email: 'first-link@example.com' });
    expect(await spreadAttack(owner.email, 8, GUARD_MAX, '198.18.4')).toEqual(repeat(GUARD_MAX, 401));
    expect(smtp.mailTo(owner.email)).toEqual([]);
    const mailed = smtp.next(owner.email);
    expectGuardRefusal(await login('198.51.100.77', owner.email, owner.password));
    const mail = await mailed;
    expect(mail.to).toEqual([owner.email]);
    expect((await followLink('198.51.100.77', tokenIn(mail))).statusCode).toBe(204);
    expect((await login('198.51.100.77', owner.email, owner.password)).statusCode).toBe(200);
  });
});

describe('attack: using the link flow to get past the guard', () => {
  let owner: TestUser;
  let token: string;
  beforeAll(async () => {
    owner = await createUser(app, { email: 'link-target@example.com' });
    await spreadAttack(owner.email, 8, GUARD_MAX, '198.51.100');
    const mailed = smtp.next(owner.email);
    // The attacker's own refused attempt (at 203.0.113.66) is what sends this link.
    expectGuardRefusal(await login('203.0.113.66', owner.email, WRONG));
    token = tokenIn(await mailed);
  });

  const expectInvalidToken = (response: LightMyRequestResponse) => {
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 40002 });
  };

  it('a made-up token, a reset token and an empty one: 400 (40002 or 422), nothing let in', async () => {
    expectInvalidToken(await followLink('203.0.113.66', 'AAAAAAAAAAAAAAAAAAAAAA'));
    const resetToken = await app.identity.accountTokens.issue(owner.id, 'password_reset', owner.email);
    expectInvalidToken(await followLink('203.0.113.66', resetToken));
    expect((await followLink('203.0.113.66', '')).statusCode).toBe(422);
    expectGuardRefusal(await login('203.0.113.66', owner.email, owner.password));
  });

  it('the link lets in the address it is opened from, not the one whose refusal sent it', async () => {
    expect((await followLink('192.0.2.31', token)).statusCode).toBe(204);
    // The attacker's address stays refused, even with the right password; the owner's gets in.
    expectGuardRefusal(await login('203.0.113.66', owner.email, owner.password));
    expect((await login('192.0.2.31', owner.email, owner.password)).statusCode).toBe(200);
  });

  it('a used link: 400 (40002), and the address that presents it again is not let in', async () => {
    expectInvalidToken(await followLink('203.0.113.67', token));
    expectGuardRefusal(await login('203.0.113.67', owner.email, owner.password));
  });

  it('a vouched address is no password bypass: a wrong password there is 401, and counted', async () => {
    const before = await tokensIssued(owner);
    expect((await login('192.0.2.31', owner.email, WRONG)).statusCode).toBe(401);
    expect(await tokensIssued(owner)).toBe(before);
  });

  it('a link mailed to an address the account no longer has: 400 (40002)', async () => {
    const mover = await createUser(app, { email: 'mover@example.com' });
    const stale = await app.identity.accountTokens.issue(mover.id, 'address_trust', mover.email);
    await app.db.prisma.user.update({ where: { id: mover.id }, data: { email: 'moved@example.com' } });
    expectInvalidToken(await followLink('192.0.2.32', stale));
  });
});

describe('no oracle in the refusal', () => {
  it('the same 429 body for the right password, a wrong one and an account that does not exist; no link for the latter', async () => {
    const owner = await createUser(app, { email: 'oracle@example.com' });
    const unknown = 'nobody-here@example.com';
    await spreadAttack(owner.email, 8, GUARD_MAX, '198.18.0');
    await spreadAttack(unknown, 8, GUARD_MAX, '198.18.1');
    const right = await login('192.0.2.40', owner.email, owner.password);
    const wrong = await login('192.0.2.41', owner.email, WRONG);
    const none = await login('192.0.2.42', unknown, owner.password);
    for (const response of [right, wrong, none]) {
      expectGuardRefusal(response);
      expect(response.body).toBe(right.body);
      expect(response.headers['content-type']).toBe(right.headers['content-type']);
    }
    // A notice without a link: a message leaves either way, so the slot it holds tells nothing (issue 46).
    const notices = await linksTo(unknown);
    expect(notices.length).toBeGreaterThan(0);
    for (const notice of notices) {
      expect(notice.subject).toBe('Repeated logins with this e-mail address');
      expect(`${notice.text}${notice.html}`).not.toContain('#token=');
    }
    expect(smtp.mailTo(owner.email).length).toBeGreaterThan(0);
  });
});

describe('attack: bombing the owner’s inbox through the guard', () => {
  it(`20 refusals from 20 new addresses mail the owner ${MAILS_PER_WINDOW} links, each of which still works`, async () => {
    const owner = await createUser(app, { email: 'inbox@example.com' });
    await spreadAttack(owner.email, 8, GUARD_MAX, '198.18.2');
    for (let n = 1; n <= 20; n++) expectGuardRefusal(await login(`203.0.113.${100 + n}`, owner.email, WRONG));
    const mails = await linksTo(owner.email);
    expect(mails).toHaveLength(MAILS_PER_WINDOW);
    expect(await app.db.prisma.accountToken.count({ where: { userId: owner.id, purpose: 'address_trust' } })).toBe(MAILS_PER_WINDOW);
    // A newer link does not void an older one: the attacker cannot spoil the link the owner is about to open.
    for (const [n, mail] of mails.entries()) {
      expect((await followLink(`192.0.2.${50 + n}`, tokenIn(mail))).statusCode).toBe(204);
      expect((await login(`192.0.2.${50 + n}`, owner.email, owner.password)).statusCode).toBe(200);
    }
  });
});

describe('existing behaviour: an address the owner logged in from', () => {
  it('gets in at once while the guard refuses every new address, with no link needed', async () => {
    const owner = await createUser(app, { email: 'regular@example.com' });
    expect((await login('192.0.2.90', owner.email, owner.password)).statusCode).toBe(200);
    await spreadAttack(owner.email, 8, GUARD_MAX + 5, '198.18.3');
    expectGuardRefusal(await login('192.0.2.91', owner.email, owner.password));
    expect((await login('192.0.2.90', owner.email, owner.password)).statusCode).toBe(200);
  });
});

describe('a deployment that cannot send mail (no SMTP_URL)', () => {
  it('promises no link in the refusal', async () => {
    const noMail = await createTestApp({ trustProxy: true, rateLimits: { loginAccount: { max: 2, windowMs: 900_000 } } });
    try {
      const owner = await createUser(noMail, { email: 'no-mail@example.com' });
      const from = (address: string, password: string) =>
        noMail.inject({ method: 'POST', url: '/login', payload: { email: owner.email, password }, headers: { 'x-forwarded-for': address } });
      for (const address of ['198.18.9.1', '198.18.9.2']) expect((await from(address, WRONG)).statusCode).toBe(401);
      const refused = await from('192.0.2.99', owner.password);
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toEqual({ code: 42900, message: expect.not.stringContaining('link') });
    } finally {
      await noMail.close();
    }
  });
});
