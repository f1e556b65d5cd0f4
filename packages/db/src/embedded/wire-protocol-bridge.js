// @ts-check
// Serves one PGlite instance to PostgreSQL clients over a socket: frames the wire protocol and runs it on PGlite.
//
// Written by hand, after @electric-sql/pglite-socket (whose server does the same): that package pins PGlite to one
// exact version and eight extension packages as required peers, and serves only through its own net.Server. This is
// its framing and its queue, kept to what the product's clients send (pg, adapter-pg, the schema engine: simple and
// extended queries). Not supported: COPY … FROM STDIN (PGlite cannot resume a copy across calls), cancel requests.
// PGlite itself answers every message, the startup message included.

const SSL_REQUEST_CODE = 80877103; // a client asking for TLS before its startup message: answered 'N' (no TLS here)
const GSSENC_REQUEST_CODE = 80877104;
const TERMINATE = 0x58; // 'X': the client's goodbye; PGlite's one backend outlives every client, so it is not passed on
const SYNC = 0x53; // 'S': ends an extended-protocol exchange
const QUERY = 0x51; // 'Q': a simple query, a whole exchange by itself
const SYNC_MESSAGE = new Uint8Array([SYNC, 0, 0, 0, 4]);
const MAX_STARTUP_LENGTH = 10_000; // as PostgreSQL's own limit on a startup packet
const MAX_MESSAGE_LENGTH = 1 << 30; // PostgreSQL's largest field (1 GB)

/**
 * @typedef {{ socket: import('node:net').Socket, closed: boolean }} Session
 * @typedef {{ session: Session, bytes: Uint8Array | null, complete: boolean }} Work
 *   bytes null: end what the (vanished) session left in the middle;
 *   complete: the batch ends an exchange (a startup, a simple query, a Sync); otherwise more of it is to come
 */

/**
 * PGlite has one backend, shared by every connection. Batches run one at a time, in arrival order, except while a
 * connection is in the middle of something (an open transaction, or an extended-protocol exchange not yet ended by
 * its Sync): then only that connection is served, and the others wait. A connection that goes away in the middle has
 * it ended and rolled back. (The backend's session state, SET or prepared statement names, is still one for all: the
 * product's clients use none across connections.)
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

  /** @param {Work} work whole protocol messages of one session */
  push(work) {
    this.#pending.push(work);
    void this.#drain();
  }

  /** The session has gone: its queued batches are dropped, and what it left in the middle is ended. @param {Session} session */
  drop(session) {
    this.#pending = this.#pending.filter((work) => work.session !== session);
    // Queued first for the owner, so it runs in its turn (never beside a batch of the owner's still running).
    if (this.#owner === session) this.#pending.unshift({ session, bytes: null, complete: true });
    void this.#drain();
  }

  async #drain() {
    if (this.#running) return;
    this.#running = true;
    try {
      for (;;) {
        const owner = this.#owner;
        const index = owner ? this.#pending.findIndex((work) => work.session === owner) : 0;
        const [work] = index < 0 ? [] : this.#pending.splice(index, 1);
        if (!work) return;
        await this.#run(work);
        const inTheMiddle = !work.complete || this.#pglite.isInTransaction();
        if (inTheMiddle && work.session.closed) await this.#endAbandoned(); // it went away during its own batch
        this.#owner = inTheMiddle && !work.session.closed ? work.session : null;
      }
    } finally {
      this.#running = false;
    }
  }

  /**
   * Ends what a vanished session left: a Sync first (after an error the backend skips everything until one, a
   * ROLLBACK included), then a ROLLBACK of its open transaction.
   */
  async #endAbandoned() {
    await this.#pglite.execProtocolRaw(SYNC_MESSAGE).catch(() => undefined);
    if (this.#pglite.isInTransaction()) await this.#pglite.exec('ROLLBACK').catch(() => undefined);
  }

  /** @param {Work} work */
  async #run({ session, bytes }) {
    if (bytes === null) return this.#endAbandoned();
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
 * optional TLS or GSS request), then typed messages `[type][int32 length][body]`. The startup message goes alone
 * (PGlite reads a batch that starts with one as that message only); after it, the whole messages of one read go as
 * one batch (a query's Parse/Bind/Describe/Execute/Sync arrive together): one call into PGlite and one write back
 * instead of five. Bytes that are not this protocol close the connection.
 * @param {import('node:net').Socket} socket @param {ExclusiveQueue} queue
 */
export function serveConnection(socket, queue) {
  /** @type {Session} */
  const session = { socket, closed: false };
  /** @type {Buffer[]} */
  let chunks = [];
  let received = 0;
  let needed = 0; // bytes the next message needs, once its header is known: later reads are only collected
  let started = false;

  /** @returns {boolean} false when the bytes are not the protocol (the socket is destroyed) */
  const take = () => {
    let buffered = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    /** @type {Buffer[]} */
    let batch = [];
    let batchType = 0;
    const flush = (/** @type {boolean} */ startup) => {
      if (batch.length === 0) return;
      const complete = startup || batchType === SYNC || batchType === QUERY;
      queue.push({ session, bytes: new Uint8Array(Buffer.concat(batch)), complete }); // a copy: PGlite reads it later
      batch = [];
    };
    needed = 0;
    for (;;) {
      const headerLength = started ? 5 : 4;
      if (buffered.length < headerLength) break;
      const length = started ? 1 + buffered.readInt32BE(1) : buffered.readInt32BE(0);
      const valid = started ? length >= 5 && length <= MAX_MESSAGE_LENGTH + 1 : length >= 8 && length <= MAX_STARTUP_LENGTH;
      if (!valid) return false;
      if (buffered.length < length) {
        needed = length;
        break;
      }
      const message = buffered.subarray(0, length);
      buffered = buffered.subarray(length);
      if (!started) {
        const code = message.readInt32BE(4);
        if (code === SSL_REQUEST_CODE || code === GSSENC_REQUEST_CODE) {
          socket.write('N');
          continue;
        }
        started = true;
        batch.push(message);
        flush(true);
        continue;
      }
      if (message[0] === TERMINATE) {
        flush(false);
        socket.end();
        buffered = buffered.subarray(buffered.length);
        break;
      }
      batch.push(message);
      batchType = message[0] ?? 0;
    }
    flush(false);
    chunks = buffered.length > 0 ? [buffered] : [];
    received = buffered.length;
    return true;
  };

  socket.setNoDelay(true);
  socket.on('data', (data) => {
    chunks.push(data);
    received += data.length;
    if (received < needed) return; // a large message still arriving: collected, not re-read on every chunk
    if (!take()) socket.destroy();
  });
  socket.on('error', () => undefined); // a client that vanished: 'close' follows
  socket.on('close', () => {
    session.closed = true;
    queue.drop(session);
  });
}
