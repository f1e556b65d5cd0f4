// The composition root: the domain built once, in dependency order, with its hooks — the identity module, mail
// delivery, the account lifecycle and the services both doors call — and decorated on the app (nothing patched later).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AccountLifecycle } from '../auth/account-lifecycle.js';
import { AddressTrust } from '../auth/address-trust.js';
import { systemClock, type Clock } from '../auth/clock.js';
import { Identity, type IdentityStores } from '../auth/identity.js';
import { MailDelivery } from '../mail/delivery.js';
import { createMailer } from '../mail/mailer.js';
import { createServices, type Services } from '../services/index.js';
import type { RateBucket } from '../http/rate-bucket.js';

declare module 'fastify' {
  interface FastifyInstance {
    identity: Identity;
    /** Password change and reset, e-mail verification and their mail (SPEC §3.2). */
    account: AccountLifecycle;
    /** The owner's way past the per-account login guard from a new address: a mailed link (SPEC §3.3). */
    addressTrust: AddressTrust;
    /** The domain: REST handlers and GraphQL resolvers, on every transport, call these. */
    services: Services;
    /** The mail outbox and its worker (mail/delivery.ts): `idle()` waits for what was queued (tests, a stop). */
    mail: MailDelivery;
  }
}

export interface DomainPluginOptions {
  clock?: Clock | undefined;
  stores?: IdentityStores | undefined;
}

async function domainPlugin(app: FastifyInstance, opts: DomainPluginOptions): Promise<void> {
  const { config, db, sharedState } = app;
  const identity = new Identity(app, db.prisma, opts.clock ?? systemClock, opts.stores ?? sharedState.stores, config.secrets.signing);
  const delivery = new MailDelivery(createMailer(config.mail, app.log), db.prisma, app.log, {
    retryDelaysMs: config.mail.retryDelaysMs,
    outbox: config.mail.outbox,
    onOutcome: (outcome, kind) => app.metrics.countMail(outcome, kind),
  });
  app.metrics.watchMailOutbox(() => delivery.pending());
  const bounds = delivery.bounds;
  app.stores.declare({
    name: 'mail-outbox',
    home: 'database',
    scope: 'store',
    maxEntries: bounds.queueMax + bounds.priorityReserve,
    perClient:
      'MAIL_SENDER_MAX_PENDING messages waiting per sender (the client address that asked, IPv6 by /64; the account for the mail a change of it ' +
      'sends; trust links are charged to the account’s address, at most 3 an hour), ' +
      'and per hour MAIL_RECIPIENT_MAX_PER_HOUR to one address and MAIL_ACCOUNT_MAX_PER_HOUR about one account, per kind',
    atBound:
      'the request that would add a message is refused (503, 50302, Retry-After), decided by the queue and the sender’s own share only; ' +
      'over a budget the message is not stored and the request answers the same; trust links and change notices may use MAIL_PRIORITY_RESERVE more',
    config: ['MAIL_QUEUE_MAX', 'MAIL_PRIORITY_RESERVE', 'MAIL_SENDER_MAX_PENDING', 'MAIL_RECIPIENT_MAX_PER_HOUR', 'MAIL_ACCOUNT_MAX_PER_HOUR'],
    size: async () => ({ entries: await delivery.pending() }),
  });
  if (!delivery.configured) app.log.warn('No SMTP_URL: mail of the account lifecycle (verification, password reset) is not sent');
  const account = new AccountLifecycle(db.prisma, identity, delivery, config.mail.publicUrl);
  app.decorate('identity', identity);
  app.decorate('account', account);
  app.decorate('mail', delivery);
  const consume = (bucket: RateBucket, key: string) => app.consumeRateLimit(bucket, { key });
  app.decorate('addressTrust', new AddressTrust(db.prisma, identity, delivery, { publicUrl: config.mail.publicUrl, consume, log: app.log }));
  app.decorate('services', createServices(db, sharedState.events, config.collections, account.userHooks));
  // The outbox's worker is started last of the start (app.ts), and stops before the database closes (rows left wait
  // for the next start).
  app.addHook('onClose', () => delivery.close());
}

export default fp(domainPlugin, { name: 'domain', dependencies: ['database', 'shared-state', 'metrics'] });
