// An SMTP server in the bench's own process that takes every message and counts it (the product's mail goes somewhere).
import { SMTPServer } from 'smtp-server';

export interface BenchSmtp {
  /** smtp://127.0.0.1:<port>, for the product's SMTP_URL. */
  url: string;
  /** Messages received so far. */
  delivered(): number;
  close(): void;
}

export async function startSmtpSink(): Promise<BenchSmtp> {
  let delivered = 0;
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      stream.resume();
      stream.on('end', () => (delivered++, callback()));
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const port = (smtp.server.address() as { port: number }).port;
  return { url: `smtp://127.0.0.1:${port}`, delivered: () => delivered, close: () => smtp.close() };
}
