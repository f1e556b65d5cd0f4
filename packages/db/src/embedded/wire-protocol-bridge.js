// @ts-check
// Serves one PGlite instance to PostgreSQL clients over a socket: frames the wire protocol and runs it on PGlite.
//
// Written by hand, after @electric-sql/pglite-socket (whose server does the same): that package pins PGlite to one
// exact version and eight extension packages as required peers, and serves TCP or a path only through its own
// net.Server. This is its framing and its queue, kept to what the product's clients (pg, adapter-pg, the schema
// engine) send. PGlite itself answers every message, the startup message included.

const SSL_REQUEST_CODE = 80877103; // a client asking for TLS before its startup message: answered 'N' (no TLS here)
const GSSENC_REQUEST_CODE = 80877104;
const TERMINATE = 0x58; // 'X': the client's goodbye; PGlite's one backend outlives every client, so it is not passed on

/**
 * @typedef {{ socket: import('node:net').Socket, closed: boolean }} Session
 * @typedef {{ session: Session, bytes: Uint8Array | null }} Work   bytes null: roll back what the session left open
 */

/**
 * PGlite has one backend, shared by every connection. Batches run one at a time, in arrival order, except while a
 * transaction is open: then only the connection that opened it is served, as a PostgreSQL server would isolate it
 * (the others wait). A connection that goes away inside its transaction has it rolled back.
 */
export class ExclusiveQueue {
  /** @type {Work[]} */
  #pending = [];
  /** @type {Session | null} */
  #owner = null;
  #running = false;
  /** @type {import('@electric-sql/pglite').PGlite} */
  #pglite;

  /** @param {import('@electric-sql/pglite').PGlite} pglite */
  constructor(pglite) {
    this.#pglite = pglite;
  }

  /** @param {Session} session @param {Uint8Array} bytes one or more whole protocol messages */
  push(session, bytes) {
    this.#pending.push({ session, bytes });
    void this.#drain();
  }

  /** The session has gone: its queued batches are dropped, and a transaction it left open is rolled back. @param {Session} session */
  drop(session) {
    this.#pending = this.#pending.filter((work) => work.session !== session);
    if (this.#owner === session) this.#pending.unshift({ session, bytes: null });
    void this.#drain();
  }

  async #drain() {
    if (this.#running) return;
    this.#running = true;
    try {
      for (;;) {
        const owner = this.#owner;
        const index = owner ? this.#pending.findIndex((work) => work.session === owner) : 0;
        if (index < 0 || index >= this.#pending.length) return;
        const [work] = this.#pending.splice(index, 1);
        if (work) await this.#run(work);
        this.#owner = this.#pglite.isInTransaction() ? (work?.session ?? null) : null;
      }
    } finally {
      this.#running = false;
    }
  }

  /** @param {Work} work */
  async #run({ session, bytes }) {
    if (bytes === null) {
      if (this.#pglite.isInTransaction()) await this.#pglite.exec('ROLLBACK').catch(() => undefined);
      return;
    }
    /** @type {Buffer[]} */
    const answer = [];
    try {
      // onRawData's chunks are views of WebAssembly memory that PGlite reuses: copied at once.
      await this.#pglite.execProtocolRawStream(bytes, { onRawData: (chunk) => answer.push(Buffer.from(chunk)) });
    } catch (error) {
      // Not an SQL error (those are answered as ErrorResponse messages) but PGlite failing: the client cannot go on.
      session.socket.destroy(/** @type {Error} */ (error));
      return;
    }
    if (!session.closed && answer.length > 0) session.socket.write(answer.length === 1 ? answer[0] : Buffer.concat(answer));
  }
}

/**
 * Serves `socket` (one client connection) from `queue`: the first message is the untyped startup message (after an
 * optional TLS or GSS request), then typed messages `[type][int32 length][body]`. Every whole message received in one
 * read is passed on as one batch (a query's Parse/Bind/Describe/Execute/Sync arrive together): one call into PGlite
 * and one write back instead of five.
 * @param {import('node:net').Socket} socket @param {ExclusiveQueue} queue
 */
export function serveConnection(socket, queue) {
  /** @type {Session} */
  const session = { socket, closed: false };
  let buffered = Buffer.alloc(0);
  let started = false;

  socket.setNoDelay(true);
  socket.on('data', (data) => {
    buffered = buffered.length === 0 ? data : Buffer.concat([buffered, data]);
    /** @type {Buffer[]} */
    const messages = [];
    for (;;) {
      const headerLength = started ? 5 : 4;
      if (buffered.length < headerLength) break;
      const length = started ? 1 + buffered.readInt32BE(1) : buffered.readInt32BE(0);
      if (length < headerLength - 1 || length > 1 << 30) return void socket.destroy(); // not the PostgreSQL protocol
      if (buffered.length < length) break;
      const message = buffered.subarray(0, length);
      buffered = buffered.subarray(length);
      if (!started) {
        const code = length >= 8 ? message.readInt32BE(4) : 0;
        if (code === SSL_REQUEST_CODE || code === GSSENC_REQUEST_CODE) {
          socket.write('N');
          continue;
        }
        started = true;
      } else if (message[0] === TERMINATE) {
        socket.end();
        break;
      }
      messages.push(message);
    }
    // A copy: the socket's buffers are reused, and PGlite reads the batch later, in its turn.
    if (messages.length > 0) queue.push(session, new Uint8Array(Buffer.concat(messages)));
  });
  socket.on('error', () => undefined); // a client that vanished: 'close' follows
  socket.on('close', () => {
    session.closed = true;
    queue.drop(session);
  });
}
