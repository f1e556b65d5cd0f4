// Mail a stranger can queue for others (issue 46, items 5 and 6): a flood of `forgot` that lost a real user's reset
// (admitted after the answer, the database overwhelmed), one client's unknown addresses each counted as a sender of its
// own (a victim's reset behind 1 200 rows), a bound that dropped the reset and the owner's trust link while `forgot`
// answered 202, the four delivery slots as an oracle of whether an account exists, and a claim's 10-minute lease after a
// crash. Through the real HTTP interface, to a real SMTP server in this process that holds messages in DATA when told
// to (a slow server: each held message keeps its slot), on the real outbox. Order of events, not timers, decides.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase } from '@users-posts/db/testing';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { randomUUID } from 'node:crypto';
import { buildApp } from '../../src/app.js';
import { DEFAULT_OUTBOX_CONFIG, MailOutbox } from '../../src/mail/outbox.js';
import { bearer, createAuthTestApp, createUser, login } from '../support/auth.js';
import { testConfig } from '../support/config.js';
import { SmtpSink, tokenIn } from '../support/smtp.js';

const MAIL = { from: 'no-reply@users-posts.test', publicUrl: 'https://app.test' };
const uniqueEmail = (name: string, domain = 'example.com') => `${name}-${randomUUID().slice(0, 8)}@${domain}`;
const isFlood = (to: string[]) => to.some((address) => address.endsWith('@flood.test'));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const forgot = (app: FastifyInstance, email: string, address: string) =>
  app.inject({ method: 'POST', url: '/auth/password/forgot', payload: { email }, remoteAddress: address });

/** Resolves once `ready()` (a database condition) holds; checked every 20 ms, failing after `timeoutMs`. */
async function eventually(ready: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await sleep(20);
  }
}

/** Runs `tasks` with at most `width` in flight at once; their results in order. */
async function inParallel<T>(tasks: (() => Promise<T>)[], width: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < tasks.length) {
        const index = next++;
        results[index] = await tasks[index]!();
      }
    }),
  );
  return results;
}

/** The documented refusal of a full outbox: 503, code 50302, with Retry-After. */
function expectQueueFull(response: LightMyRequestResponse): void {
  expect(response.statusCode).toBe(503);
  expect(response.json()).toMatchObject({ code: 50302 });
  expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
}

const pendingTo = (app: FastifyInstance, domain: string) =>
  app.db.prisma.mailOutbox.count({ where: { status: 'pending', recipient: { endsWith: domain } } });

describe('a flood of forgot from many addresses to unknown recipients cannot lose a real user’s reset', () => {
  let smtp: SmtpSink;
  let app: FastifyInstance;
  const lines: Record<string, unknown>[] = [];
  const QUEUE_MAX = 150;
  beforeAll(async () => {
    smtp = await SmtpSink.start();
    smtp.hold = (mail) => isFlood(mail.to); // the flood's mail is slow to leave: the queue fills
    app = await createAuthTestApp({
      logDestination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
      config: { logLevel: 'warn', mail: { ...MAIL, smtpUrl: smtp.url, outbox: { queueMax: QUEUE_MAX } } },
    });
  });
  afterAll(async () => {
    smtp.releaseAll();
    await app.close();
    await smtp.close();
  });

  it('every 202 is a stored message, the rest are 503 with Retry-After, and the victim’s reset comes before the flood', async () => {
    const victim = await createUser(app, { email: uniqueEmail('victim') });
    const flood = (round: number) =>
      Array.from({ length: 12 * 10 }, (_, n) => () => forgot(app, uniqueEmail(`f${round}-${n}`, 'flood.test'), `198.51.100.${(n % 12) + 1}`));
    // 12 addresses × 20 (their hourly `forgot` budget), 8 at once; the victim asks halfway, from an address of its own.
    const first = await inParallel(flood(1), 8);
    const asked = await forgot(app, victim.email, '192.0.2.10');
    expect(asked.statusCode).toBe(202); // the queue had room: the victim's reset is stored, not dropped
    const second = await inParallel(flood(2), 8);

    const answers = [...first, ...second];
    for (const answer of answers.filter((response) => response.statusCode !== 202)) expectQueueFull(answer);
    const accepted = answers.filter((response) => response.statusCode === 202).length;
    // No 202 without its message: the flood's accepted requests are exactly its rows (every address distinct).
    expect(await app.db.prisma.mailOutbox.count({ where: { recipient: { endsWith: '@flood.test' } } })).toBe(accepted);
    expect(accepted).toBeLessThan(answers.length); // the bound refused the rest, loudly
    expect(accepted + 1).toBeLessThanOrEqual(QUEUE_MAX + 8); // at most the concurrency past the bound
    expect(lines.filter((line) => line.msg === 'mail not queued: the outbox could not be written')).toEqual([]);

    // The slow server lets one message go at a time: the victim's reset leaves within one turn of each flooding address.
    await smtp.until(() => smtp.held.length === DEFAULT_OUTBOX_CONFIG.concurrency);
    let released = 0;
    while (smtp.mailTo(victim.email).length === 0) {
      const arrived = smtp.arrivals.length;
      expect(smtp.releaseOne()).toBe(true);
      released += 1;
      await smtp.until(() => smtp.mailTo(victim.email).length > 0 || smtp.arrivals.length > arrived);
      await smtp.until(() => smtp.mailTo(victim.email).length > 0 || smtp.held.length === DEFAULT_OUTBOX_CONFIG.concurrency);
    }
    expect(released).toBeLessThanOrEqual(12);
    expect(smtp.mailTo(victim.email)[0]!.subject).toBe('Reset your password');
    expect(tokenIn(smtp.mailTo(victim.email)[0]!)).toEqual(expect.any(String));
    expect(await pendingTo(app, '@flood.test')).toBeGreaterThan(accepted - 20);
  }, 120_000);
});

describe('one sender filling the outbox does not delay another sender’s reset', () => {
  let smtp: SmtpSink;
  let app: FastifyInstance;
  beforeAll(async () => {
    smtp = await SmtpSink.start();
    smtp.hold = (mail) => isFlood(mail.to);
    app = await createAuthTestApp({ config: { mail: { ...MAIL, smtpUrl: smtp.url, outbox: { concurrency: 2 } } } });
  });
  afterAll(async () => {
    smtp.releaseAll();
    await app.close();
    await smtp.close();
  });

  it('20 resets to unknown addresses from one address, then a victim’s: the first slot to free takes the victim’s', async () => {
    for (let n = 0; n < 20; n++) expect((await forgot(app, uniqueEmail(`one-${n}`, 'flood.test'), '203.0.113.5')).statusCode).toBe(202);
    await smtp.until(() => smtp.held.length === 2); // both slots busy with the flooder's first two
    const victim = await createUser(app, { email: uniqueEmail('other') });
    expect((await forgot(app, victim.email, '192.0.2.20')).statusCode).toBe(202);

    const before = smtp.arrivals.length;
    smtp.releaseOne();
    await smtp.nth(victim.email, 1);
    // The next message to reach the server after one slot freed was the victim's, not the flooder's third (each of the
    // flooder's unknown addresses is not a sender of its own: the client address is).
    expect(smtp.arrivals[before]).toBe(victim.email.toLowerCase());
    expect(await pendingTo(app, '@flood.test')).toBeGreaterThanOrEqual(18);
  }, 60_000);
});

describe('at the bound the request that would add is refused, not silently dropped', () => {
  let smtp: SmtpSink;
  let app: FastifyInstance;
  beforeAll(async () => {
    smtp = await SmtpSink.start();
    smtp.hold = () => true; // nothing leaves: the queue stays as filled
    app = await createAuthTestApp({
      config: { mail: { ...MAIL, smtpUrl: smtp.url, outbox: { queueMax: 6, senderMaxPending: 3, concurrency: 1 } } },
    });
  });
  afterAll(async () => {
    smtp.releaseAll();
    await app.close();
    await smtp.close();
  });

  it('a sender’s full share refuses its next request, the same for an address with an account or without', async () => {
    const holder = await createUser(app, { email: uniqueEmail('holder') });
    for (let n = 0; n < 3; n++) expect((await forgot(app, uniqueEmail(`share-${n}`), '203.0.113.21')).statusCode).toBe(202);
    const known = await forgot(app, holder.email, '203.0.113.21');
    const unknown = await forgot(app, uniqueEmail('nobody'), '203.0.113.21');
    expectQueueFull(known);
    expectQueueFull(unknown);
    expect(known.body).toBe(unknown.body);
    expect(known.headers['retry-after']).toBe(unknown.headers['retry-after']);
    // Another address is not refused for this one's share.
    expect((await forgot(app, uniqueEmail('neighbour'), '203.0.113.22')).statusCode).toBe(202);
    expect(await app.db.prisma.mailOutbox.count()).toBe(4);
  });

  it('a full queue refuses every sender’s next request, reset and verification alike, and stores nothing for them', async () => {
    const holder = await createUser(app, { email: uniqueEmail('holder-2') });
    for (const address of ['203.0.113.22', '203.0.113.23']) expect((await forgot(app, uniqueEmail('fill'), address)).statusCode).toBe(202);
    expect(await app.db.prisma.mailOutbox.count({ where: { status: 'pending' } })).toBe(6);
    const known = await forgot(app, holder.email, '203.0.113.24');
    const unknown = await forgot(app, uniqueEmail('nobody'), '203.0.113.25');
    expectQueueFull(known);
    expectQueueFull(unknown);
    expect(known.body).toBe(unknown.body);
    // A signed-in user asking for a new verification link is refused too, rather than told 202 for nothing.
    const loggedIn = await login(app, { email: holder.email, password: holder.password }, '203.0.113.26');
    expect(loggedIn.statusCode).toBe(200);
    const resend = await app.inject({
      method: 'POST',
      url: '/auth/email/verify/resend',
      headers: bearer(loggedIn.json().accessToken as string),
      remoteAddress: '203.0.113.26',
    });
    expectQueueFull(resend);
    expect(await app.db.prisma.mailOutbox.count()).toBe(6);
  });

  it('a recipient over its budget answers 202 for an address with an account and one without alike', async () => {
    const budgeted = await createAuthTestApp({
      config: { mail: { ...MAIL, smtpUrl: smtp.url, outbox: { perRecipientPerHour: 1, concurrency: 1 } } },
    });
    try {
      const holder = await createUser(budgeted, { email: uniqueEmail('budgeted') });
      const nobody = uniqueEmail('nobody');
      const statuses = [];
      for (const [n, email] of [holder.email, nobody, holder.email, nobody].entries())
        statuses.push((await forgot(budgeted, email, `198.18.7.${n + 1}`)).statusCode);
      expect(statuses).toEqual([202, 202, 202, 202]);
      expect(await budgeted.db.prisma.mailOutbox.count({ where: { recipient: holder.email } })).toBe(1);
      expect(await budgeted.db.prisma.mailOutbox.count({ where: { recipient: nobody } })).toBe(1);
    } finally {
      smtp.releaseAll();
      await budgeted.close();
    }
  });
});

describe('the owner’s trust link is never the one lost', () => {
  let smtp: SmtpSink;
  let app: FastifyInstance;
  beforeAll(async () => {
    smtp = await SmtpSink.start();
    smtp.hold = (mail) => isFlood(mail.to);
    app = await createAuthTestApp({
      config: {
        mail: { ...MAIL, smtpUrl: smtp.url, outbox: { queueMax: 4, concurrency: 2 } },
        rateLimits: { loginAccount: { max: 3, windowMs: 900_000 } },
      },
    });
  });
  afterAll(async () => {
    smtp.releaseAll();
    await app.close();
    await smtp.close();
  });

  it('a queue others filled takes the link beyond its bound, and the link leaves at the first free slot', async () => {
    const owner = await createUser(app, { email: uniqueEmail('owner') });
    for (let n = 1; n <= 4; n++) expect((await forgot(app, uniqueEmail(`fill-${n}`, 'flood.test'), `198.51.100.${n}`)).statusCode).toBe(202);
    expectQueueFull(await forgot(app, uniqueEmail('one-more', 'flood.test'), '198.51.100.5'));
    await smtp.until(() => smtp.held.length === 2);

    // The account's guard trips, and the owner's right password from a new address is refused with the link's promise.
    for (let n = 1; n <= 3; n++)
      expect((await login(app, { email: owner.email, password: 'wrong password!' }, `203.0.113.${n}`)).statusCode).toBe(401);
    expect((await login(app, { email: owner.email, password: owner.password }, '192.0.2.77')).statusCode).toBe(429);
    await eventually(async () => (await app.db.prisma.mailOutbox.count({ where: { kind: 'address_trust', recipient: owner.email } })) > 0);
    expect(await app.mail.pending()).toBeGreaterThan(4); // past MAIL_QUEUE_MAX, in the reserve
    expectQueueFull(await forgot(app, uniqueEmail('still-full', 'flood.test'), '198.51.100.6')); // the reserve is not theirs

    const before = smtp.arrivals.length;
    smtp.releaseOne();
    const link = await smtp.nth(owner.email, 1);
    expect(smtp.arrivals[before]).toBe(owner.email); // ahead of the two flood messages waiting
    expect(link.subject).toBe('A login to your account from a new address');
    expect(
      (await app.inject({ method: 'POST', url: '/auth/login/trust-address', payload: { token: tokenIn(link) }, remoteAddress: '192.0.2.77' }))
        .statusCode,
    ).toBe(204);
    expect((await login(app, { email: owner.email, password: owner.password }, '192.0.2.77')).statusCode).toBe(200);
  }, 60_000);
});

describe('no oracle in anyone’s mail: one’s own mail takes the same time whether another address has an account', () => {
  let smtp: SmtpSink;
  let app: FastifyInstance;
  beforeAll(async () => {
    smtp = await SmtpSink.start();
    app = await createAuthTestApp({ config: { mail: { ...MAIL, smtpUrl: smtp.url } } }); // four slots, as by default
  });
  afterAll(async () => {
    smtp.releaseAll();
    await app.close();
    await smtp.close();
  });

  /**
   * The probe: resets for three of one's own addresses and the candidate, then one's own again, while the server holds
   * every message (each one SMTP round trip, made as long as the test likes). Answers which roles reached the server
   * while the first four were held, and the order of every arrival once released.
   */
  async function probe(candidateExists: boolean, address: string): Promise<{ whileHeld: string[]; arrivals: string[] }> {
    const own = await Promise.all([1, 2, 3, 4].map(async (n) => (await createUser(app, { email: uniqueEmail(`own-${n}`) })).email));
    const candidate = candidateExists ? (await createUser(app, { email: uniqueEmail('candidate') })).email : uniqueEmail('candidate');
    const role = new Map([...own.map((email, n) => [email, `own-${n + 1}`] as const), [candidate, 'candidate']]);
    const start = smtp.arrivals.length;
    smtp.hold = () => true;
    for (const email of [own[0]!, own[1]!, own[2]!, candidate, own[3]!]) expect((await forgot(app, email, address)).statusCode).toBe(202);
    await smtp.until(() => smtp.held.length === 4);
    await sleep(500); // what a fifth slot would have had to take the prober's own fourth (it had a slot at once before)
    const whileHeld = smtp.arrivals.slice(start).map((email) => role.get(email) ?? email);
    smtp.releaseAll();
    await smtp.nth(own[3]!, 1);
    await app.mail.idle();
    return { whileHeld, arrivals: smtp.arrivals.slice(start).map((email) => role.get(email) ?? email) };
  }

  it('the candidate’s message holds its slot as long with an account as without: the prober’s own next mail waits the same', async () => {
    const exists = await probe(true, '203.0.113.31');
    const absent = await probe(false, '203.0.113.32');
    // Four slots, four messages held: the candidate's is one of them either way, and the prober's own fourth waits
    // for a slot to free (the four connections may reach DATA in any order: compared as sets).
    expect([...exists.whileHeld].sort()).toEqual(['candidate', 'own-1', 'own-2', 'own-3']);
    expect([...absent.whileHeld].sort()).toEqual([...exists.whileHeld].sort());
    for (const run of [exists, absent]) expect(run.arrivals).toEqual([...run.whileHeld, 'own-4']);
    // The candidate without an account got a notice without a link; with one, a reset link.
    const notice = smtp.received.filter((mail) => mail.subject === 'Password reset requested');
    expect(notice).toHaveLength(1);
    expect(notice[0]!.text).not.toContain('#token=');
  }, 60_000);
});

describe('a delivery interrupted by a crash is retried within a minute', () => {
  it('a row claimed by a worker that died is sent by the next app once the claim’s lease ends', async () => {
    const database = await createTestDatabase();
    const closeDatabase = database.close.bind(database);
    database.close = async () => undefined; // each app's close leaves it open for the next
    const sink = await SmtpSink.start();
    const mail = { ...MAIL, smtpUrl: sink.url, retryDelaysMs: [3_600_000], outbox: { leaseMs: 1_500 } };
    try {
      // A first app stores a reset; its first attempt fails (451) and it waits for a retry an hour away.
      sink.refuseNext = 1;
      const first = await buildApp(testConfig({ mail }), { database });
      const user = await createUser(first, { email: uniqueEmail('crashed') });
      expect((await forgot(first, user.email, '192.0.2.50')).statusCode).toBe(202);
      await eventually(async () => (await database.prisma.mailOutbox.findFirst({ where: { recipient: user.email } }))?.attempts === 1);
      await first.close();
      // A worker claims it now (the retry due) and dies mid-send: nothing settles it, nothing renews its claim.
      await database.prisma.$executeRaw`UPDATE mail_outbox SET next_attempt_at = LOCALTIMESTAMP`;
      const [claimed] = await new MailOutbox(database.prisma).claim(1, 1_500);
      expect(claimed).toMatchObject({ recipient: user.email, attempts: 2 });

      const second = await buildApp(testConfig({ mail }), { database });
      try {
        const started = Date.now();
        await second.ready();
        const sent = await sink.nth(user.email, 1);
        expect(sent.subject).toBe('Reset your password');
        // The lease (1.5 s here) and one poll (2 s), far within a minute; attempts count the dead worker's too.
        expect(Date.now() - started).toBeLessThan(30_000);
        await eventually(async () => (await database.prisma.mailOutbox.findFirst({ where: { recipient: user.email } }))?.status === 'sent');
        expect(await database.prisma.mailOutbox.findFirst({ where: { recipient: user.email } })).toMatchObject({ attempts: 3 });
      } finally {
        await second.close();
      }
    } finally {
      await sink.close();
      await closeDatabase();
    }
  }, 60_000);

  it('by default a claim lasts at most a minute, and a send that outlasts its lease is renewed, not sent twice', async () => {
    expect(DEFAULT_OUTBOX_CONFIG.leaseMs).toBeLessThanOrEqual(60_000);
    const sink = await SmtpSink.start();
    sink.hold = () => true;
    const defaults = await createAuthTestApp({ config: { mail: { ...MAIL, smtpUrl: sink.url } } });
    const short = await createAuthTestApp({ config: { mail: { ...MAIL, smtpUrl: sink.url, outbox: { leaseMs: 600 } } } });
    try {
      // The default app's claim, read in the database while its message is held: at most a minute ahead.
      const first = await createUser(defaults, { email: uniqueEmail('lease') });
      expect((await forgot(defaults, first.email, '192.0.2.60')).statusCode).toBe(202);
      await sink.until(() => sink.held.length === 1);
      const [lease] = await defaults.db.prisma.$queryRaw<{ seconds: number }[]>`
        SELECT extract(epoch FROM next_attempt_at - LOCALTIMESTAMP)::float8 AS seconds FROM mail_outbox WHERE recipient = ${first.email}`;
      expect(lease!.seconds).toBeGreaterThan(0);
      expect(lease!.seconds).toBeLessThanOrEqual(60);
      sink.releaseOne();
      await defaults.mail.idle();

      // A 600 ms lease, a message held for five leases: renewed meanwhile, so neither a poll nor a slot sends it again.
      const second = await createUser(short, { email: uniqueEmail('renewed') });
      expect((await forgot(short, second.email, '192.0.2.61')).statusCode).toBe(202);
      await sink.until(() => sink.held.length === 1);
      await sleep(3_000); // past the lease and a poll (2 s)
      expect(sink.held).toHaveLength(1);
      sink.releaseAll();
      await short.mail.idle();
      expect(sink.mailTo(second.email)).toHaveLength(1);
      expect(await short.db.prisma.mailOutbox.findFirst({ where: { recipient: second.email } })).toMatchObject({ status: 'sent', attempts: 1 });
    } finally {
      sink.releaseAll();
      await defaults.close();
      await short.close();
      await sink.close();
    }
  }, 60_000);
});
