// SMTP-TIMEOUTS-IGNORED (issue 40): an SMTP server that stalls at each step of the exchange (accepts and never greets;
// greets and goes silent after EHLO; takes the message and never answers the final dot) makes a send fail within the
// configured timeouts, over real TCP, instead of holding the connection (and a worker's slot) for minutes.
import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createMailer } from '../../src/mail/mailer.js';

/** Where the fake server stops answering. */
type StallAt = 'greeting' | 'after-ehlo' | 'in-data';

/** A TCP server that speaks just enough SMTP to reach `stallAt`, then says nothing, holding the connection open. */
async function stallingServer(stallAt: StallAt): Promise<{ url: string; server: Server; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if (stallAt === 'greeting') return; // accepted, never greeted
    socket.write('220 stall.test ESMTP\r\n');
    let inData = false;
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      let end: number;
      while ((end = buffered.indexOf('\r\n')) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (inData) {
          if (line === '.') inData = false; // the message is in: and no answer ever comes
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') {
          if (stallAt === 'after-ehlo') continue;
          socket.write('250 stall.test\r\n');
        } else if (verb === 'MAIL' || verb === 'RCPT') socket.write('250 OK\r\n');
        else if (verb === 'DATA') {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (verb === 'QUIT') socket.end('221 bye\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, server, sockets };
}

const TIMEOUT_MS = 300;
/** Far below nodemailer's own defaults (greeting 30 s, socket 10 min), which is what a send got when ours were ignored. */
const BOUND_MS = 5_000;

let open: { server: Server; sockets: Set<Socket> } | undefined;
afterEach(async () => {
  if (!open) return;
  for (const socket of open.sockets) socket.destroy();
  await new Promise<void>((resolve) => open!.server.close(() => resolve()));
  open = undefined;
});

describe('a stalling SMTP server cannot hold a send', () => {
  it.each<StallAt>(['greeting', 'after-ehlo', 'in-data'])('stalls at %s: the send fails within the configured timeouts', async (stallAt) => {
    const stalling = await stallingServer(stallAt);
    open = stalling;
    const mailer = createMailer(
      {
        smtpUrl: stalling.url,
        from: 'no-reply@users-posts.test',
        publicUrl: 'https://app.test',
        smtpTimeouts: { connectionMs: TIMEOUT_MS, greetingMs: TIMEOUT_MS, socketMs: TIMEOUT_MS },
      },
      pino({ level: 'silent' }),
    );
    const started = process.hrtime.bigint();
    await expect(mailer.send({ to: 'someone@example.com', subject: 'Hello', text: 'Hi\n', html: '<p>Hi</p>\n' })).rejects.toThrow();
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    expect(elapsedMs).toBeLessThan(BOUND_MS);
    mailer.close();
  });
});
