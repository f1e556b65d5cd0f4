// A real SMTP server in the test process (smtp-server, the nodemailer project's): the app sends to it over TCP, the
// test waits for each message as an event and follows the links in it. It can be told to refuse mail (SMTP down), and
// to hold messages in DATA until the test releases them (a slow server: each held message keeps its sender's slot).
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
  /** Which messages to hold in DATA, unanswered, until released (none by default). */
  hold: (mail: ReceivedMail) => boolean = () => false;
  /** Messages held now, oldest first, each with what answers its DATA. */
  readonly held: { mail: ReceivedMail; release: () => void }[] = [];
  /** The first recipient of every message that reached DATA, held or not, in the order they did. */
  readonly arrivals: string[] = [];
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
            const mail = {
              to: session.envelope.rcptTo.map((recipient) => recipient.address.toLowerCase()),
              from: typeof session.envelope.mailFrom === 'object' ? session.envelope.mailFrom.address : '',
              subject: parsed.subject ?? '',
              text: parsed.text ?? '',
              html: typeof parsed.html === 'string' ? parsed.html : '',
            };
            sink!.arrivals.push(mail.to[0] ?? '');
            const accept = () => (sink!.accept(mail), callback());
            if (sink!.hold(mail)) {
              sink!.held.push({ mail, release: accept });
              sink!.wake();
            } else accept();
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
    this.wake();
  }

  private wake(): void {
    for (const wake of [...this.waiters]) wake();
  }

  /** Resolves once `ready()` holds, checked at each message that arrives or is held (an event, not a timer). */
  async until(ready: () => boolean): Promise<void> {
    while (!ready()) {
      await new Promise<void>((resolve) => {
        const wake = () => (this.waiters.delete(wake), resolve());
        this.waiters.add(wake);
      });
    }
  }

  /** Answers the oldest held message (it is received then); false when none is held. */
  releaseOne(): boolean {
    const next = this.held.shift();
    next?.release();
    return next !== undefined;
  }

  /** Answers every held message, and holds no more. */
  releaseAll(): void {
    this.hold = () => false;
    while (this.releaseOne());
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
    this.releaseAll();
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
