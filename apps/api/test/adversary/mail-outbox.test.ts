// Mail as a weapon or an oracle (issue 40): EMAIL-CHANGE-BOMB (flipping one's own e-mail mails a chosen inbox without
// a budget), MAIL-QUEUE-UNBOUNDED (a flood of changes through a hostile recipient's stalling server holds everyone's
// mail; the queue grows without bound and dies with the process), FORGOT-QUEUE-ORACLE (a reset for an existing account
// delays the prober's own next mail). Real SMTP over TCP to a server in this process, the real outbox on the database.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, countStatements, type Database } from '@users-posts/db/testing';
import type { FastifyInstance } from 'fastify';
import { simpleParser } from 'mailparser';
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { buildApp } from '../../src/app.js';
import { bearer, createAuthTestApp, createUser, login, type TestUser } from '../support/auth.js';
import { testConfig } from '../support/config.js';

const METRICS = { authorization: 'Bearer test-metrics-token-0123456789' };
const uniqueEmail = (name: string, domain = 'example.com') => `${name}-${randomUUID().slice(0, 8)}@${domain}`;

interface Mail {
  to: string;
  subject: string;
}

/**
 * An SMTP server that takes mail like a sink, except that it never answers RCPT for `@tarpit.test` (a hostile
 * recipient's server), and holds the final answer of DATA for any address in `held` until `release`.
 */
class ScriptedSmtp {
  readonly received: Mail[] = [];
  /** Addresses whose message is held in DATA, and the releases of those held now. */
  readonly hold = new Set<string>();
  readonly held = new Map<string, () => void>();
  rcptStalled = 0;
  private readonly waiters = new Set<() => void>();
  private constructor(private readonly server: SMTPServer) {}

  static async start(): Promise<ScriptedSmtp> {
    let self: ScriptedSmtp | undefined;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      closeTimeout: 50,
      onRcptTo(address, _session, callback) {
        if (address.address.toLowerCase().endsWith('@tarpit.test')) {
          self!.rcptStalled += 1;
          self!.wake();
          return; // never answered: the client's socket timeout ends it
        }
        callback();
      },
      onData(stream, session, callback) {
        simpleParser(stream)
          .then((parsed) => {
            const to = session.envelope.rcptTo.map((recipient) => recipient.address.toLowerCase());
            const mail = { to: to[0]!, subject: parsed.subject ?? '' };
            const accept = () => (self!.received.push(mail), self!.wake(), callback());
            if (self!.hold.has(mail.to)) {
              self!.held.set(mail.to, accept);
              self!.wake();
            } else accept();
          })
          .catch(callback);
      },
    });
    self = new ScriptedSmtp(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return self;
  }

  get url(): string {
    return `smtp://127.0.0.1:${(this.server.server.address() as AddressInfo).port}`;
  }

  private wake(): void {
    for (const wake of [...this.waiters]) wake();
  }

  /** Resolves once `ready()` holds (checked at each SMTP event, not on a timer). */
  async until(ready: () => boolean): Promise<void> {
    while (!ready()) {
      await new Promise<void>((resolve) => {
        const wake = () => (this.waiters.delete(wake), resolve());
        this.waiters.add(wake);
      });
    }
  }

  mailTo(to: string): Mail[] {
    return this.received.filter((mail) => mail.to === to.toLowerCase());
  }

  close(): Promise<void> {
    for (const release of this.held.values()) release();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

async function signedIn(app: FastifyInstance, email: string): Promise<TestUser & { headers: Record<string, string> }> {
  const user = await createUser(app, { email });
  const response = await login(app, { email: user.email, password: user.password });
  expect(response.statusCode).toBe(200);
  return { ...user, headers: bearer(response.json().accessToken as string) };
}

const changeEmail = (app: FastifyInstance, user: { id: number; headers: Record<string, string> }, email: string) =>
  app.inject({ method: 'PATCH', url: `/api/v1/users/${user.id}`, headers: user.headers, payload: { email } });

const metricsText = async (app: FastifyInstance) => (await app.inject({ method: 'GET', url: '/metrics', headers: METRICS })).body;

describe('EMAIL-CHANGE-BOMB: flipping one’s own e-mail to a victim’s address', () => {
  let smtp: ScriptedSmtp;
  let app: FastifyInstance;
  const lines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    smtp = await ScriptedSmtp.start();
    app = await createAuthTestApp({
      logDestination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
      config: {
        logLevel: 'info',
        mail: {
          smtpUrl: smtp.url,
          from: 'no-reply@users-posts.test',
          publicUrl: 'https://app.test',
          outbox: { perRecipientPerHour: 3, perAccountPerHour: 8 },
        },
        // Each change of one's own e-mail uses up the sign-up bucket (email-change-enumeration.test.ts): not measured here.
        rateLimits: { signup: { max: 1_000, windowMs: 3_600_000 } },
      },
    });
  });
  afterAll(async () => {
    await app.close();
    await smtp.close();
  });

  it('mails the victim at most its budget per kind, and every change still answers 200', async () => {
    const attacker = await signedIn(app, uniqueEmail('bomber'));
    const victim = uniqueEmail('victim');
    for (let round = 0; round < 20; round++) {
      const to = round % 2 === 0 ? victim : uniqueEmail('bomber-own');
      expect((await changeEmail(app, attacker, to)).statusCode).toBe(200);
    }
    await app.mail.idle();
    const toVictim = smtp.mailTo(victim);
    // 10 verifications and 10 notices were asked for: 3 of each kind (MAIL_RECIPIENT_MAX_PER_HOUR) were stored; the
    // notices all left, and a verification only while the account still had the address when it was composed.
    expect(await app.db.prisma.mailOutbox.count({ where: { recipient: victim } })).toBe(6);
    expect(toVictim.filter((mail) => mail.subject === 'The e-mail address of your account was changed')).toHaveLength(3);
    expect(toVictim.length).toBeLessThanOrEqual(6);
    // The refusals are logged with their kind, never the address.
    const refused = lines.filter((line) => line.msg === 'mail not queued: over its budget');
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]).toMatchObject({ mail: expect.any(String), reason: expect.stringMatching(/budget/) });
    expect(JSON.stringify(lines)).not.toContain(victim);
  });

  it('spread over many addresses, one account is held to its own budget per kind', async () => {
    const attacker = await signedIn(app, uniqueEmail('spreader'));
    const before = smtp.received.length;
    for (let round = 0; round < 20; round++) expect((await changeEmail(app, attacker, uniqueEmail('spread'))).statusCode).toBe(200);
    await app.mail.idle();
    // 20 verifications and 20 notices asked for: 8 of each stored (MAIL_ACCOUNT_MAX_PER_HOUR), and no more sent.
    expect(await app.db.prisma.mailOutbox.count({ where: { userId: attacker.id, kind: 'email_verification' } })).toBe(8);
    expect(await app.db.prisma.mailOutbox.count({ where: { userId: attacker.id, kind: 'email_changed' } })).toBe(8);
    expect(smtp.received.length - before).toBeLessThanOrEqual(16);
    expect(await metricsText(app)).toMatch(/mail_messages_total\{kind="email_verification",outcome="dropped"\} \d+/);
  });
});

describe('MAIL-QUEUE-UNBOUNDED: a flood of changes through a stalling recipient beside a reset', () => {
  let smtp: ScriptedSmtp;
  let app: FastifyInstance;
  beforeAll(async () => {
    smtp = await ScriptedSmtp.start();
    app = await createAuthTestApp({
      config: {
        mail: {
          smtpUrl: smtp.url,
          from: 'no-reply@users-posts.test',
          publicUrl: 'https://app.test',
          retryDelaysMs: [1],
          smtpTimeouts: { connectionMs: 1_000, greetingMs: 1_000, socketMs: 1_000 },
          outbox: { perAccountPerHour: 100 },
        },
      },
    });
  });
  afterAll(async () => {
    await app.close();
    await smtp.close();
  });

  it('the victim’s reset arrives while the flood is still stalling, not after it', async () => {
    const attacker = await signedIn(app, uniqueEmail('flooder', 'tarpit.test'));
    // 24 changes: 24 verifications and 24 notices to addresses whose server never answers RCPT; each holds a
    // worker slot for the socket timeout (1 s here), twice (one retry): 48 s of stalling in a serial queue.
    for (let round = 0; round < 24; round++) expect((await changeEmail(app, attacker, uniqueEmail('sink', 'tarpit.test'))).statusCode).toBe(200);
    await app.mail.queued();
    await smtp.until(() => smtp.rcptStalled >= 4); // every slot is busy stalling

    const victim = await createUser(app, { email: uniqueEmail('owner') });
    expect((await app.inject({ method: 'POST', url: '/auth/password/forgot', payload: { email: victim.email } })).statusCode).toBe(202);
    await smtp.until(() => smtp.mailTo(victim.email).length > 0);
    expect(smtp.mailTo(victim.email)[0]!.subject).toBe('Reset your password');
    // It did not wait for the flood: most of the stalling mail is still waiting in the outbox.
    expect(await app.mail.pending()).toBeGreaterThan(20);
    expect(await metricsText(app)).toMatch(/mail_outbox_pending [1-9]\d*/);
  }, 30_000);
});

describe('MAIL-QUEUE-UNBOUNDED: the queue’s bound, and a restart', () => {
  /** A TCP server that accepts and drops every connection: each send fails at once. */
  async function refusingServer() {
    let connected: () => void = () => undefined;
    const firstConnection = new Promise<void>((resolve) => (connected = resolve));
    const server = createServer((socket) => {
      connected();
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `smtp://127.0.0.1:${(server.address() as AddressInfo).port}`,
      firstConnection,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  it('beyond MAIL_QUEUE_MAX nothing is stored, and a request that can be refused is (503); the gauge and the counter say so', async () => {
    const down = await refusingServer();
    const app = await createAuthTestApp({
      config: {
        mail: {
          smtpUrl: down.url,
          from: 'no-reply@users-posts.test',
          publicUrl: 'https://app.test',
          retryDelaysMs: [3_600_000],
          outbox: { queueMax: 3 },
        },
      },
    });
    try {
      for (let index = 0; index < 6; index++) {
        const created = await app.inject({
          method: 'POST',
          url: '/api/v1/users',
          payload: { name: `Queued ${index}`, email: uniqueEmail('queued'), password: 'a fine passphrase' },
        });
        expect(created.statusCode).toBe(201); // the answer is the same whether its mail was queued or not
        await app.mail.queued();
      }
      expect(await app.db.prisma.mailOutbox.count()).toBe(3);
      // A sign-up's verification follows a committed account: logged and counted. A reset is asked for by its request,
      // which is refused instead of answered 202 for a message never stored (issue 46; adversary/mail-fairness.test.ts).
      const forgot = await app.inject({ method: 'POST', url: '/auth/password/forgot', payload: { email: uniqueEmail('late') } });
      expect(forgot.statusCode).toBe(503);
      expect(forgot.json()).toMatchObject({ code: 50302 });
      expect(forgot.headers['retry-after']).toBe('30');
      expect(await app.db.prisma.mailOutbox.count()).toBe(3);
      const metrics = await metricsText(app);
      expect(metrics).toMatch(/^mail_outbox_pending 3$/m);
      expect(metrics).toMatch(/^mail_messages_total\{kind="email_verification",outcome="dropped"\} 3$/m);
      expect(metrics).toMatch(/^mail_messages_total\{kind="password_reset",outcome="dropped"\} 1$/m);
    } finally {
      await app.close();
      await down.close();
    }
  });

  it('a message waiting when the app stops is sent by the next app on the same database', async () => {
    const database: Database = await createTestDatabase();
    const closeDatabase = database.close.bind(database);
    database.close = async () => undefined; // the first app's close must leave it open for the second
    const down = await refusingServer();
    const sink = await ScriptedSmtp.start();
    const mailConfig = { from: 'no-reply@users-posts.test', publicUrl: 'https://app.test', retryDelaysMs: [3_600_000] };
    const email = uniqueEmail('restarted');
    try {
      const first = await buildApp(testConfig({ mail: { ...mailConfig, smtpUrl: down.url } }), { database });
      const created = await first.inject({
        method: 'POST',
        url: '/api/v1/users',
        payload: { name: 'Restarted', email, password: 'a fine passphrase' },
      });
      expect(created.statusCode).toBe(201);
      await first.mail.queued();
      await down.firstConnection; // its first attempt failed: the row waits for its retry
      await first.close();
      const [row] = await database.prisma.mailOutbox.findMany({ where: { recipient: email } });
      expect(row).toMatchObject({ status: 'pending', kind: 'email_verification', attempts: 1 });
      expect(JSON.stringify(row)).not.toMatch(/token/i); // what composes it, not a token
      // The retry's time has come (an hour later, as far as the row is concerned).
      await database.prisma.$executeRaw`UPDATE mail_outbox SET next_attempt_at = LOCALTIMESTAMP`;

      const second = await buildApp(testConfig({ mail: { ...mailConfig, smtpUrl: sink.url } }), { database });
      try {
        await second.ready();
        await sink.until(() => sink.mailTo(email).length > 0);
        expect(sink.mailTo(email)[0]!.subject).toBe('Confirm your e-mail address');
      } finally {
        await second.close();
      }
    } finally {
      await sink.close();
      await down.close();
      await closeDatabase();
    }
  });
});

describe('FORGOT-QUEUE-ORACLE: a reset for an existing account and for an unknown address', () => {
  let smtp: ScriptedSmtp;
  let app: FastifyInstance;
  beforeAll(async () => {
    smtp = await ScriptedSmtp.start();
    app = await createAuthTestApp({ config: { mail: { smtpUrl: smtp.url, from: 'no-reply@users-posts.test', publicUrl: 'https://app.test' } } });
  });
  afterAll(async () => {
    await app.close();
    await smtp.close();
  });

  const forgot = (email: string) => app.inject({ method: 'POST', url: '/auth/password/forgot', payload: { email } });

  it('costs the same statements up to the answer and the outbox row', async () => {
    const holder = await createUser(app, { email: uniqueEmail('holder') });
    await forgot(uniqueEmail('warm-up'));
    await app.mail.idle();
    const statementsOf = async (email: string) => {
      const counter = countStatements(app.db);
      try {
        expect((await forgot(email)).statusCode).toBe(202);
        await app.mail.queued();
        // The request's statements end with its outbox row; what the worker does after (or a poll's claim) is not the request's.
        const statements = counter.statements.filter((sql) => !/FROM mail_outbox m\b/.test(sql));
        return statements.slice(0, statements.findIndex((sql) => /INSERT INTO mail_outbox/.test(sql)) + 1);
      } finally {
        counter.stop();
      }
    };
    const known = await statementsOf(holder.email);
    await app.mail.idle();
    const unknown = await statementsOf(uniqueEmail('nobody'));
    expect(known).toEqual(unknown);
    expect(known.at(-1)).toMatch(/INSERT INTO mail_outbox/);
    await app.mail.idle();
  });

  it('the prober’s own next mail does not wait for the candidate’s reset', async () => {
    const candidate = await createUser(app, { email: uniqueEmail('candidate') });
    const prober = uniqueEmail('prober');
    smtp.hold.add(candidate.email); // the candidate's reset stays in DATA until released
    expect((await forgot(candidate.email)).statusCode).toBe(202);
    await smtp.until(() => smtp.held.has(candidate.email));
    // The prober's own mail right after (a sign-up's verification), while the candidate's reset is still in flight.
    const created = await app.inject({
      method: 'POST',
      url: '/api/v1/users',
      payload: { name: 'Prober', email: prober, password: 'a fine passphrase' },
    });
    expect(created.statusCode).toBe(201);
    await smtp.until(() => smtp.mailTo(prober).length > 0);
    expect(smtp.mailTo(candidate.email)).toHaveLength(0); // it arrived first: no delay of the candidate's to measure
    smtp.held.get(candidate.email)!();
    await smtp.until(() => smtp.mailTo(candidate.email).length > 0);
  });
});
