// Conditional requests in the client: a GET under /api answered with an ETag is kept, and read again with
// If-None-Match (a 304 is handed to the caller as the kept 200: same body, no bytes sent); with `conditionalWrites`,
// a PUT, PATCH or DELETE of a resource the client has read carries that read's ETag as If-Match, so it fails with 412
// instead of overwriting a change it never saw.

export interface ConditionalOptions {
  /** Keep and revalidate GET answers (default true). */
  revalidate?: boolean;
  /** Send the ETag of the last read of a resource as `If-Match` on its writes (default false: a 412 is a new outcome). */
  conditionalWrites?: boolean;
  /** At most this many answers are kept (default 200), each at most 256 KiB. */
  maxEntries?: number;
}

interface Kept {
  etag: string;
  /** The answer to hand out on a 304; none for an answer marked `Cache-Control: no-store` (only its ETag is kept). */
  body?: ArrayBuffer;
  headers: [string, string][];
}

const MAX_BODY_BYTES = 256 * 1024;
const WRITES = new Set(['PUT', 'PATCH', 'DELETE']);

/** Who the request is sent as: answers kept for one caller are never handed to another (a representation may differ). */
export type CallerOf = () => string;

export class ConditionalCache {
  private readonly kept = new Map<string, Kept>();
  private readonly maxEntries: number;

  constructor(
    private readonly options: ConditionalOptions,
    private readonly callerOf: CallerOf,
  ) {
    const asked = Math.floor(options.maxEntries ?? 200);
    this.maxEntries = Number.isFinite(asked) && asked >= 0 ? asked : 200;
  }

  /** Forgets everything (the client calls it when its login ends). */
  clear(): void {
    this.kept.clear();
  }

  /** Wraps `next` (the auth layer's fetch). */
  fetch(next: (request: Request) => Promise<Response>): (request: Request) => Promise<Response> {
    return async (request) => {
      const path = new URL(request.url).pathname;
      if (!path.startsWith('/api/')) return next(request);
      if (request.method === 'GET' && this.options.revalidate !== false) return this.read(request, next);
      if (WRITES.has(request.method)) return this.write(request, next);
      return next(request);
    };
  }

  private keyOf(request: Request): string {
    return `${this.callerOf()} ${request.headers.get('accept') ?? ''} ${resourceOf(request.url)}`;
  }

  private async read(request: Request, next: (request: Request) => Promise<Response>): Promise<Response> {
    if (request.headers.has('if-none-match')) return next(request); // the caller revalidates by itself
    const key = this.keyOf(request);
    const kept = this.kept.get(key);
    let sent = request;
    if (kept?.body) {
      sent = new Request(request);
      sent.headers.set('if-none-match', kept.etag);
    }
    const response = await next(sent);
    if (response.status === 304 && kept?.body) {
      // The kept 200, with the headers of this answer (rate limits, request id) over the kept ones.
      const headers = new Headers(kept.headers);
      response.headers.forEach((value, name) => headers.set(name, value));
      this.kept.delete(key);
      this.kept.set(key, kept); // most recently used last
      return new Response(kept.body.slice(0), { status: 200, statusText: 'OK', headers });
    }
    const etag = response.headers.get('etag');
    if (response.status !== 200 || !etag) {
      this.kept.delete(key);
      return response;
    }
    // `no-store` (every authenticated answer of this server): the body is not kept, only the ETag for conditional writes.
    const storable = !/(^|,)\s*no-store\s*(,|$)/i.test(response.headers.get('cache-control') ?? '');
    const length = Number(response.headers.get('content-length') ?? Number.NaN);
    const body = storable && length <= MAX_BODY_BYTES ? await response.clone().arrayBuffer() : undefined;
    this.kept.delete(key);
    this.kept.set(key, { etag, ...(body ? { body } : {}), headers: body ? [...response.headers] : [] });
    while (this.kept.size > this.maxEntries) this.kept.delete(this.kept.keys().next().value!);
    return response;
  }

  private async write(request: Request, next: (request: Request) => Promise<Response>): Promise<Response> {
    const caller = `${this.callerOf()} `;
    const resource = resourceOf(request.url);
    const ofResource = (key: string) => key.startsWith(caller) && key.endsWith(` ${resource}`);
    const etag = [...this.kept.entries()].find(([key]) => ofResource(key))?.[1].etag;
    let sent = request;
    // Only a strong ETag names one version; a weak one (a collection's) cannot condition a write.
    if (this.options.conditionalWrites && etag && !etag.startsWith('W/') && !request.headers.has('if-match')) {
      sent = new Request(request);
      sent.headers.set('if-match', etag);
    }
    const response = await next(sent);
    // Whatever the outcome, what was kept of this resource may be stale now: the next read fetches it whole.
    for (const key of [...this.kept.keys()]) if (key.endsWith(` ${resource}`)) this.kept.delete(key);
    return response;
  }
}

/** A URL with the unversioned `/api/` prefix (which the server serves as v1) written as `/api/v1/`: one resource, one key. */
function resourceOf(url: string): string {
  const parsed = new URL(url);
  parsed.pathname = parsed.pathname.replace(/^\/api\/(?!v\d+\/)/, '/api/v1/');
  return parsed.href;
}
