// Socket-level guards of the HTTP server (issue 31, items 2 and 6), beside Node's own (headers and request timeouts,
// the total connection cap, in app.ts): an answer stalls at most so long (a reader that stops reading is cut off and
// what the server held for it freed), and one client address may hold at most so many connections, so that idle
// sockets re-opened as they close cannot take every slot from everyone else. By hand: Node caps connections in all
// only (`server.maxConnections`), and no kept Fastify plugin counts them per address.
import type { FastifyInstance } from 'fastify';
import type { Server } from 'node:http';

/**
 * While a request is answered, its socket is closed when nothing moves on it for `ms` (`HTTP_SEND_TIMEOUT_MS`): Node
 * then destroys it (no `timeout` listener), dropping the bytes queued for it. Armed per answer, not on the server, so an
 * idle keep-alive connection keeps Fastify's keep-alive timeout (72 s, longer than a load balancer's 60). Answers that
 * flow, SSE streams (pinged every 12 s) and WebSockets (no HTTP request once upgraded) are not cut.
 */
export function limitSendStalls(app: FastifyInstance, ms: number): void {
  app.addHook('onRequest', (request, _reply, done) => {
    request.raw.socket?.setTimeout?.(ms); // (an injected request's socket has none)
    done();
  });
  app.addHook('onResponse', (request, _reply, done) => {
    request.raw.socket?.setTimeout?.(0);
    done();
  });
}

/** Closes at once a connection from an address that already holds `max` (`HTTP_MAX_CONNECTIONS_PER_ADDRESS`). */
export function capConnectionsPerAddress(server: Server, max: number): void {
  // bound: one per client address with an open connection (HTTP_MAX_CONNECTIONS)
  const held = new Map<string, number>();
  server.on('connection', (socket) => {
    const address = socket.remoteAddress ?? '';
    const count = held.get(address) ?? 0;
    if (count >= max) {
      socket.destroy();
      return;
    }
    held.set(address, count + 1);
    socket.once('close', () => {
      const left = (held.get(address) ?? 1) - 1;
      if (left > 0) held.set(address, left);
      else held.delete(address);
    });
  });
}
