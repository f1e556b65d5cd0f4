// A real SMTP server in the test process (smtp-server, the nodemailer project's): the app sends to it over TCP, the
// test waits for each message as an event and follows the links in it. It can be told to refuse mail (SMTP down).
import { simpleParser } from 'mailparser';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  from: string;
  subject: string;
  text: string;
  html: string;
}

export class SmtpSink {
  readonly received: ReceivedMail[] = [];
  /** Messages to refuse with a 451 before accepting again (a failing SMTP server). */
  refuseNext = 0;
  private readonly waiters = new Set<() => void>();

  private constructor(private readonly server: SMTPServer) {}

  static async start(): Promise<SmtpSink> {
    let sink: SmtpSink | undefined;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        simpleParser(stream)
          .then((parsed) => {
            if (sink!.refuseNext > 0) {
              sink!.refuseNext -= 1;
              return callback(Object.assign(new Error('Mailbox unavailable, try again later'), { responseCode: 451 }));
            }
            sink!.accept({
              to: session.envelope.rcptTo.map((recipient) => recipient.address.toLowerCase()),
              from: typeof session.envelope.mailFrom === 'object' ? session.envelope.mailFrom.address : '',
              subject: parsed.subject ?? '',
              text: parsed.text ?? '',
              html: typeof parsed.html === 'string' ? parsed.html : '',
            });
            callback();
          })
          .catch(callback);
      },
    });
    sink = new SmtpSink(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return sink;
  }

  get url(): string {
    const { port } = this.server.server.address() as AddressInfo;
    return `smtp://127.0.0.1:${port}`;
  }

  private accept(mail: ReceivedMail): void {
    this.received.push(mail);
    for (const wake of this.waiters) wake();
  }

  /** Every message received so far for `to`. */
  mailTo(to: string): ReceivedMail[] {
    return this.received.filter((mail) => mail.to.includes(to.toLowerCase()));
  }

  /** Resolves with the `count`-th message (1-based) to `to` once it has arrived (an event, not a timer). */
  async nth(to: string, count: number): Promise<ReceivedMail> {
    for (;;) {
      const mail = this.mailTo(to)[count - 1];
      if (mail) return mail;
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          resolve();
        };
        this.waiters.add(wake);
      });
    }
  }

  /** The next message to `to` after the ones already received for it. */
  next(to: string): Promise<ReceivedMail> {
    return this.nth(to, this.mailTo(to).length + 1);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The token a mailed link carries (`…#token=<token>`), in the plain-text body and the HTML one alike. */
export function tokenIn(mail: ReceivedMail): string {
  const fromText = /#token=([A-Za-z0-9_-]+)/.exec(mail.text)?.[1];
  const fromHtml = /#token=([A-Za-z0-9_-]+)/.exec(mail.html)?.[1];
  if (!fromText || fromText !== fromHtml) throw new Error(`no token link in "${mail.subject}"`);
  return fromText;
}
