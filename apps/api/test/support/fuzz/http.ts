// Sends one request over real HTTP to the listening server, on a new connection each time, with the path exactly as given.
import http from 'node:http';

export interface HttpResult {
  status: number;
  headers: Record<string, string>;
  text: string;
}

const TIMEOUT_MS = 15_000;

/**
 * node:http rather than fetch: the path goes out byte for byte (fetch's URL parser would rewrite dot segments), and no
 * content-type is added but the one the case chose. One connection per request (`agent: false`): with fetch's pooled
 * keep-alive connections, about one run in four had a request wait out the timeout on a reused connection while the
 * server answered a new one at once (see the report of issue 6); a hang still fails the case.
 */
export function send(base: string, method: string, target: string, headers: Record<string, string>, body?: string): Promise<HttpResult> {
  const { hostname, port } = new URL(base);
  const payload = body === undefined ? undefined : Buffer.from(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      { hostname, port, method, path: target, agent: false, timeout: TIMEOUT_MS, headers: { ...headers, ...(payload ? { 'content-length': String(payload.length) } : {}) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const flat = Object.entries(response.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value)]);
          resolve({ status: response.statusCode ?? 0, headers: Object.fromEntries(flat), text: Buffer.concat(chunks).toString('utf8') });
        });
      },
    );
    request.on('timeout', () => request.destroy(new Error(`${method} ${target.slice(0, 300)}: no answer within ${TIMEOUT_MS} ms`)));
    request.on('error', reject);
    request.end(payload);
  });
}
