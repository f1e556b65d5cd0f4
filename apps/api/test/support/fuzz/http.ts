// Sends one request over real HTTP to the listening server, on reused keep-alive connections, with the path exactly as given.
import http from 'node:http';

export interface HttpResult {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** A subscription's stream (SSE or multipart) still open when the client let go of it: live, by design. */
  openStream?: boolean;
}

const TIMEOUT_MS = 15_000;
/** How long a streamed answer is read before the client hangs up: a subscription never ends by itself. */
const STREAM_READ_MS = 500;
const isStream = (type: string | undefined) => !!type && (type.startsWith('text/event-stream') || type.startsWith('multipart/'));

/**
 * node:http rather than fetch: the path goes out byte for byte (fetch's URL parser would rewrite dot segments), and no
 * content-type is added but the one the case chose. Connections are reused (keep-alive), as real clients do: that is
 * how the fuzz found answers sent before a body was read leaving the rest of it in front of the next request (now
 * closed by the server, see plugins/error-handler.ts); a hang still fails the case by the timeout.
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

export function send(base: string, method: string, target: string, headers: Record<string, string>, body?: string): Promise<HttpResult> {
  const { hostname, port } = new URL(base);
  const payload = body === undefined ? undefined : Buffer.from(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        hostname,
        port,
        method,
        path: target,
        agent,
        timeout: TIMEOUT_MS,
        headers: { ...headers, ...(payload ? { 'content-length': String(payload.length) } : {}) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        const result = (openStream: boolean): HttpResult => {
          const flat = Object.entries(response.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value)]);
          return {
            status: response.statusCode ?? 0,
            headers: Object.fromEntries(flat),
            text: Buffer.concat(chunks).toString('utf8'),
            ...(openStream ? { openStream } : {}),
          };
        };
        // A subscription asked for with `Accept: */*` (multipart) or text/event-stream stays open until the client
        // leaves: read its start, then hang up as a client would (the server must free the stream's slot).
        const hangUp = isStream(response.headers['content-type'])
          ? setTimeout(() => {
              resolve(result(true));
              request.destroy();
            }, STREAM_READ_MS)
          : undefined;
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject); // after the hang-up, the promise is settled already
        response.on('end', () => {
          clearTimeout(hangUp);
          resolve(result(false));
        });
      },
    );
    request.on('timeout', () => request.destroy(new Error(`${method} ${target.slice(0, 300)}: no answer within ${TIMEOUT_MS} ms`)));
    request.on('error', reject);
    request.end(payload);
  });
}
