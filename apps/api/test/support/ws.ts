// Subscription helpers for tests: the app listening on a real port, graphql-ws clients, SSE streams, and a count of
// the server-side postCreated subscribers (so a test publishes only once a subscription is really listening).
import type { FastifyInstance } from 'fastify';
import type { FormattedExecutionResult } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';

/** Starts `app` on 127.0.0.1 with a free port; returns its http:// and ws:// GraphQL URLs. */
export async function listen(app: FastifyInstance): Promise<{ http: string; ws: string }> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return { http: `http://127.0.0.1:${port}`, ws: `ws://127.0.0.1:${port}/graphql` };
}

export interface ClosedEvent {
  code: number;
  reason: string;
}

/** The `ws` implementation sending `headers` with the upgrade (e.g. X-Forwarded-For, to act as another client). */
function webSocketWith(headers: Record<string, string>): typeof WebSocket {
  return class extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, { headers });
    }
  } as typeof WebSocket;
}

/** A graphql-ws client on the real `ws` implementation, without retries; `closes` records each close event. */
export function wsClient(
  url: string,
  connectionParams?: Record<string, unknown>,
  headers?: Record<string, string>,
): Client & { closes: ClosedEvent[] } {
  const closes: ClosedEvent[] = [];
  const client = createClient({
    url,
    webSocketImpl: headers ? webSocketWith(headers) : WebSocket,
    retryAttempts: 0,
    ...(connectionParams ? { connectionParams } : {}),
    on: { closed: (event) => void closes.push({ code: (event as ClosedEvent).code, reason: String((event as ClosedEvent).reason) }) },
  });
  return Object.assign(client, { closes });
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** One subscription on a client, its results queued: `next()` awaits the next one; `error` and `done` settle once. */
export class Subscription<Data = Record<string, unknown>> {
  readonly results: FormattedExecutionResult<Data, unknown>[] = [];
  readonly error: Promise<unknown>;
  readonly done: Promise<void>;
  private readonly waiters: ((result: FormattedExecutionResult<Data, unknown>) => void)[] = [];
  private readonly dispose: () => void;

  constructor(client: Client, query: string, variables?: Record<string, unknown>) {
    let fail!: (error: unknown) => void;
    let complete!: () => void;
    this.error = new Promise((resolve) => (fail = resolve));
    this.done = new Promise((resolve) => (complete = resolve));
    this.dispose = client.subscribe<Data>(
      { query, ...(variables ? { variables } : {}) },
      {
        next: (result) => {
          const waiter = this.waiters.shift();
          if (waiter) waiter(result);
          else this.results.push(result);
        },
        error: (error) => fail(error),
        complete: () => complete(),
      },
    );
  }

  /** The next result (queued or still to come). */
  next(ms = 5_000): Promise<FormattedExecutionResult<Data, unknown>> {
    const queued = this.results.shift();
    if (queued) return Promise.resolve(queued);
    return within(new Promise((resolve) => this.waiters.push(resolve)), ms, 'a subscription result');
  }

  /** Sends `complete` for this subscription (the client's unsubscribe). */
  unsubscribe(): void {
    this.dispose();
  }

  failure(ms = 5_000): Promise<unknown> {
    return within(this.error, ms, 'a subscription error');
  }
}

/**
 * Counts the postCreated subscriptions listening on the app's event bus (started and not yet returned), by wrapping
 * `services.events.subscribe`. A subscription counts from its first `next()`, when the pub/sub listener is attached.
 */
export function watchSubscribers(app: FastifyInstance) {
  const events = app.services.events;
  const original = events.subscribe.bind(events);
  let active = 0;
  let waiters: (() => void)[] = [];
  const changed = () => {
    const pending = waiters;
    waiters = [];
    for (const wake of pending) wake();
  };
  events.subscribe = ((...args: Parameters<typeof original>) => {
    const stream = original(...args);
    const next = stream.next.bind(stream);
    const finish = stream.return.bind(stream);
    let started = false;
    let ended = false;
    stream.next = (...nextArgs: Parameters<typeof next>) => {
      const result = next(...nextArgs);
      if (!started && !ended) {
        started = true;
        active++;
        changed();
      }
      return result;
    };
    stream.return = (...returnArgs: Parameters<typeof finish>) => {
      if (started && !ended) {
        active--;
        changed();
      }
      ended = true;
      return finish(...returnArgs);
    };
    return stream;
  }) as typeof events.subscribe;

  return {
    get active() {
      return active;
    },
    /** Resolves once exactly `count` subscriptions are listening. */
    async until(count: number, ms = 5_000): Promise<void> {
      const reached = (async () => {
        while (active !== count) await new Promise<void>((wake) => waiters.push(wake));
      })();
      await within(reached, ms, `${count} postCreated subscriber(s), have ${active}`);
    },
  };
}

/** A Server-Sent Events response read line by line: `event()` resolves the next `data:` payload of an `event: next`. */
export class SseStream {
  private buffer = '';
  private readonly decoder = new TextDecoder();
  readonly lines: string[] = [];

  private constructor(
    readonly response: Response,
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly controller: AbortController,
  ) {}

  static async open(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
    const controller = new AbortController();
    const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
    if (!response.body) throw new Error(`no body (status ${response.status})`);
    return new SseStream(response, response.body.getReader(), controller);
  }

  /** The next line of the stream, or null at its end. */
  private async line(): Promise<string | null> {
    for (;;) {
      const newline = this.buffer.indexOf('\n');
      if (newline >= 0) {
        const line = this.buffer.slice(0, newline);
        this.buffer = this.buffer.slice(newline + 1);
        this.lines.push(line);
        return line;
      }
      const chunk = await this.reader.read();
      if (chunk.done) return null;
      this.buffer += this.decoder.decode(chunk.value, { stream: true });
    }
  }

  /** The event type and data of the next SSE event (pings — comment lines — skipped); null when the stream ended. */
  async event(ms = 5_000): Promise<{ event: string; data: string } | null> {
    const read = async () => {
      let event = 'message';
      let data: string | undefined;
      for (;;) {
        const line = await this.line();
        if (line === null) return null;
        if (line === '') {
          if (data !== undefined) return { event, data };
          continue;
        }
        if (line.startsWith(':')) continue;
        if (line.startsWith('event:')) event = line.slice(6).trim();
        if (line.startsWith('data:')) data = line.slice(5).trim();
      }
    };
    return within(read(), ms, 'an SSE event');
  }

  /** The rest of the body as text (e.g. the JSON error of a refused stream). */
  async text(): Promise<string> {
    let line: string | null;
    while ((line = await this.line()) !== null) void line;
    return this.lines.join('\n') + this.buffer;
  }

  close(): void {
    this.controller.abort();
  }
}

/** What an upgrade refused before the handshake answered. */
export interface RefusedUpgrade {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A raw graphql-transport-ws socket, initialised (`connection_init` → `connection_ack`) so the server keeps it open
 * without any subscription; or, when the upgrade is refused, the HTTP answer.
 */
export function openSocket(
  url: string,
  headers: Record<string, string> = {},
  payload?: Record<string, unknown>,
): Promise<WebSocket | RefusedUpgrade> {
  return within(
    new Promise((resolve, reject) => {
      const socket = new WebSocket(url, 'graphql-transport-ws', { headers });
      socket.once('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      });
      socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init', ...(payload ? { payload } : {}) })));
      socket.on('message', (data: Buffer) => {
        if ((JSON.parse(data.toString()) as { type: string }).type === 'connection_ack') resolve(socket);
      });
      socket.once('error', reject);
    }),
    5_000,
    'a WebSocket upgrade',
  );
}

/** Closes raw sockets and waits until each is closed. */
export async function closeSockets(sockets: WebSocket[]): Promise<void> {
  await Promise.all(
    sockets.map((socket) =>
      socket.readyState === WebSocket.CLOSED
        ? undefined
        : new Promise<void>((resolve) => {
            socket.once('close', () => resolve());
            socket.close();
          }),
    ),
  );
}
