// Attacks on the server's sockets (issue 31, items 2 and 6): readers that ask for a large answer and stop reading (80 of
// them held 580 MB and slowed everyone else), and one address re-opening idle sockets until it holds every slot.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { connect, type Socket } from 'node:net';
import { createTestApp } from '../support/app.js';
import { testConfig } from '../support/config.js';
import { listen } from '../support/ws.js';

/** The port the app listens on (test/support/ws.ts's `listen`). */
const portOf = async (app: FastifyInstance) => Number(new URL((await listen(app)).http).port);

/** A raw socket from `localAddress` (any 127.0.0.0/8 address is this machine), connected. */
async function socketFrom(port: number, localAddress = '127.0.0.1'): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  return socket;
}

/** Resolves when the server has closed `socket` (its end or a reset), however much it left unread. */
const closedByServer = (socket: Socket) => new Promise<void>((resolve) => socket.once('close', () => resolve()));

describe('attack: readers that stop reading', () => {
  let app: FastifyInstance;
  let port: number;
  beforeAll(async () => {
    app = await createTestApp({ http: { ...testConfig().http, sendTimeoutMs: 1_000 } });
    port = await portOf(app);
  });
  afterAll(() => app.close());

  it('a socket that asked for a 6 MB asset and reads nothing is closed once nothing moves for HTTP_SEND_TIMEOUT_MS', async () => {
    const page = await app.inject({ method: 'GET', url: '/graphql', headers: { accept: 'text/html' } });
    const script = /src="(\/graphiql\/[^"]+\/graphiql\.js)"/.exec(page.body)![1]!;
    // The server's side of each connection: a client that reads nothing cannot see its close (nothing more reaches it).
    const accepted: Socket[] = [];
    let allAccepted!: () => void;
    const eight = new Promise<void>((resolve) => (allAccepted = resolve));
    const onConnection = (socket: Socket) => {
      if (accepted.push(socket) === 8) allAccepted();
    };
    app.server.on('connection', onConnection);
    const readers = await Promise.all(Array.from({ length: 8 }, () => socketFrom(port)));
    await eight;
    for (const reader of readers) {
      reader.pause(); // reads nothing: the server's writes fill the buffers, then stall
      reader.write(`GET ${script} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n\r\n`);
    }
    app.server.off('connection', onConnection);
    expect(accepted).toHaveLength(8);
    // Each is closed by the server (and the 6 MB it was sending freed) once nothing moved on it for a second.
    await Promise.all(accepted.map(closedByServer));
    for (const reader of readers) reader.destroy();
    // Everyone else is served meanwhile and after.
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });

  it('a reader that keeps reading, however slowly it started, gets the whole answer', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/users?pageSize=100`);
    expect(response.status).toBe(200);
    expect((await response.json()).code).toBe(0);
  });
});

describe('attack: one address holding every connection', () => {
  let app: FastifyInstance;
  let port: number;
  beforeAll(async () => {
    app = await createTestApp({ http: { ...testConfig().http, maxConnectionsPerAddress: 3 } });
    port = await portOf(app);
  });
  afterAll(() => app.close());

  it('past HTTP_MAX_CONNECTIONS_PER_ADDRESS its next connection is closed at once; another address is served', async () => {
    const held = await Promise.all(Array.from({ length: 3 }, () => socketFrom(port, '127.0.0.1')));
    try {
      const extra = await socketFrom(port, '127.0.0.1');
      await closedByServer(extra);
      const other = await socketFrom(port, '127.0.0.2');
      const answer = new Promise<string>((resolve) => other.once('data', (chunk) => resolve(chunk.toString('latin1'))));
      other.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      expect(await answer).toMatch(/^HTTP\/1\.1 200/);
      // A held connection of the first address is still served, and closing one frees a slot for it.
      held[0]!.destroy();
      await closedByServer(held[0]!);
      let again: Socket | undefined;
      // The server learns of the close a moment after the client: the next connection is accepted once it has.
      for (;;) {
        again = await socketFrom(port, '127.0.0.1');
        const served = new Promise<boolean>((resolve) => {
          again!.once('data', () => resolve(true));
          again!.once('close', () => resolve(false));
        });
        again.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
        if (await served) break;
      }
    } finally {
      for (const socket of held) socket.destroy();
    }
  });
});
