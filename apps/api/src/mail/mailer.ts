// How mail leaves (SPEC §3.2): over SMTP with SMTP_URL (nodemailer); else, outside production, as `.eml` files in
// <DATA_DIR>/outbox whose paths are logged; else not at all (`configured` false: what must send mail answers 503).
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { FastifyBaseLogger } from 'fastify';
import type { MailConfig, SmtpTimeouts } from '../config/config.js';
import { DEFAULT_OUTBOX_CONFIG } from './outbox.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  readonly configured: boolean;
  /** Sends one message; rejects when the SMTP server refuses it or cannot be reached. */
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/**
 * The message as nodemailer takes it. An ASCII body is sent as it is (7bit) rather than quoted-printable, which would
 * cut the links' long tokens across lines: whoever reads an `.eml` of the outbox with grep finds the token whole.
 */
function composed(message: MailMessage) {
  const part = (content: string) => (/^[\x00-\x7f]*$/.test(content) ? { content, contentTransferEncoding: '7bit' } : content);
  return { ...message, text: part(message.text), html: part(message.html) };
}

/** SMTP's bounds by default (SMTP_CONNECTION_TIMEOUT_MS, SMTP_GREETING_TIMEOUT_MS, SMTP_SOCKET_TIMEOUT_MS). */
export const DEFAULT_SMTP_TIMEOUTS: SmtpTimeouts = { connectionMs: 10_000, greetingMs: 10_000, socketMs: 30_000 };

export function createMailer(config: MailConfig, log: FastifyBaseLogger): Mailer {
  if (config.smtpUrl) {
    const timeouts = config.smtpTimeouts ?? DEFAULT_SMTP_TIMEOUTS;
    // The timeouts go in the transport's options, beside `url` (which nodemailer parses and merges under them): the
    // second argument of createTransport is the messages' defaults, where a timeout is silently ignored (issue 40,
    // SMTP-TIMEOUTS-IGNORED). A server that accepts and never greets, or stalls after EHLO or in DATA, fails the send.
    // Pooled: a connection (and its TLS handshake) serves many messages, one per worker slot at most.
    const transport = nodemailer.createTransport(
      {
        url: config.smtpUrl,
        pool: true,
        maxConnections: config.outbox?.concurrency ?? DEFAULT_OUTBOX_CONFIG.concurrency,
        // A message whose connection closed fails at once, and the outbox retries it at its fair turn: the pool's own
        // requeue (5 by default, to the front of its queue) would let one stalling recipient hold everyone's mail.
        maxRequeues: 0,
        connectionTimeout: timeouts.connectionMs,
        greetingTimeout: timeouts.greetingMs,
        socketTimeout: timeouts.socketMs,
        dnsTimeout: timeouts.connectionMs,
      },
      { from: config.from },
    );
    return {
      configured: true,
      send: async (message) => void (await transport.sendMail(composed(message))),
      close: () => transport.close(),
    };
  }
  const { outboxDir } = config;
  if (outboxDir) {
    // nodemailer builds the whole RFC 5322 message (headers, both bodies, encodings) without sending it.
    const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
    return {
      configured: true,
      send: async (message) => {
        const { message: eml } = await transport.sendMail({ from: config.from, ...composed(message) });
        await mkdir(outboxDir, { recursive: true });
        const file = path.join(outboxDir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.eml`);
        await writeFile(file, eml as Buffer, { mode: 0o600 });
        // The path and the subject only: the message holds a token, which never goes into a log line.
        log.info({ file, subject: message.subject }, 'mail written to the outbox (no SMTP_URL)');
      },
      close: () => transport.close(),
    };
  }
  return {
    configured: false,
    send: () => Promise.reject(new Error('mail is not configured (SMTP_URL)')),
    close: () => undefined,
  };
}
