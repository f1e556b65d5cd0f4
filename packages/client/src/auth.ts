// Auth layer of the client: holds the token pair and wraps fetch so a 401 is answered by one shared refresh (seed §4.2
// rules 1–4); writes under /api carry an Idempotency-Key, so a repeated write runs once.
import type { components } from '@users-posts/contracts';

/** The pair the client holds: from `POST /login` or `POST /auth/refresh`. */
export type TokenPair = Pick<components['schemas']['TokenPair'], 'accessToken' | 'refreshToken'>;

/** Where the pair lives. The default keeps it in memory; share one store between clients (tabs) to share a refresh's result. */
export interface TokenStore {
  get(): TokenPair | null;
  set(pair: TokenPair | null): void;
}

/** Why the login state ended: the status `POST /auth/refresh` answered (seed §4.2 rule 4). */
export interface LoggedOutEvent {
  status: 401 | 403;
  /** The refresh answer (body unread). */
  response: Response;
}

export interface AuthOptions {
  /** The server's origin, e.g. `http://127.0.0.1:3000` (no trailing slash). */
  baseUrl: string;
  /** The fetch every request goes through (defaults to the global one). */
  fetch?: typeof globalThis.fetch;
  /** A pair to start with (ignored when `store` already holds one). */
  tokens?: TokenPair | null;
  store?: TokenStore;
  /** Fired once when a refresh answers 401 or 403: the pair has been cleared and the user has to log in again. */
  onLoggedOut?: (event: LoggedOutEvent) => void;
}

/** Paths the auth layer never adds a token to nor refreshes for (`security: []` in openapi.yaml). */
const UNAUTHENTICATED_PATHS = ['/login', '/auth/refresh'];

type RefreshOutcome = 'refreshed' | 'conflict' | 'failed' | 'loggedOut';

export function memoryTokenStore(initial: TokenPair | null = null): TokenStore {
  let pair = initial;
  return { get: () => pair, set: (next) => void (pair = next) };
}

/** The token-holding fetch wrapper shared by the REST and GraphQL helpers. */
export class AuthSession {
  readonly store: TokenStore;
  private readonly baseFetch: typeof globalThis.fetch;
  private readonly refreshUrl: string;
  private inflight: Promise<RefreshOutcome> | null = null;

  constructor(private readonly options: AuthOptions) {
    this.store = options.store ?? memoryTokenStore();
    if (options.tokens && !this.store.get()) this.store.set(options.tokens);
    this.baseFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.refreshUrl = `${options.baseUrl}/auth/refresh`;
  }

  get tokens(): TokenPair | null {
    return this.store.get();
  }

  setTokens(pair: TokenPair | null): void {
    this.store.set(pair);
  }

  /**
   * Sends a request with the held access token. On a 401 it refreshes once (shared by every request failing
   * meanwhile) and repeats the request once with the new token; otherwise the response is returned as it came.
   */
  readonly fetch = async (input: Request): Promise<Response> => {
    const request = withIdempotencyKey(input);
    const pair = this.store.get();
    if (!pair || request.headers.has('authorization') || UNAUTHENTICATED_PATHS.includes(new URL(request.url).pathname)) {
      return this.send(request);
    }
    const replay = request.clone(); // the body of the first attempt is consumed by sending it
    const response = await this.send(withBearer(request, pair.accessToken));
    if (response.status !== 401) return response;

    const outcome = await this.refreshAfter(pair);
    const current = this.store.get();
    if ((outcome === 'refreshed' || outcome === 'conflict') && current && current.accessToken !== pair.accessToken) {
      await response.body?.cancel();
      return this.send(withBearer(replay, current.accessToken)); // repeated once; a second 401 is returned as is
    }
    return response;
  };

  /**
   * Sends once; a keyed write whose answer was lost in transit (the connection failed, so fetch threw) is sent once
   * more with the same key: the server runs it at most once and answers the retry with the first answer.
   */
  private async send(request: Request): Promise<Response> {
    if (!request.headers.has(IDEMPOTENCY_KEY)) return this.baseFetch(request);
    const retry = request.clone();
    let response: Response;
    try {
      response = await this.baseFetch(request);
    } catch (error) {
      if (!(error instanceof TypeError)) throw error; // fetch's network failure; an abort is the caller's decision
      response = await this.baseFetch(retry.clone());
    }
    // 409 with code 40901: the first attempt (whose answer was lost) is still running; its answer comes to a retry.
    for (let wait = 0; wait < 5 && response.status === 409 && (await isKeyInUse(response)); wait += 1) {
      await new Promise((resolve) => setTimeout(resolve, 1000 * Number(response.headers.get('retry-after') ?? 1)));
      response = await this.baseFetch(retry.clone());
    }
    return response;
  }

  /** Refreshes unless the pair that failed has already been replaced; concurrent callers share one request. */
  private refreshAfter(failed: TokenPair): Promise<RefreshOutcome> {
    const current = this.store.get();
    if (!current) return Promise.resolve('loggedOut');
    if (current.accessToken !== failed.accessToken) return Promise.resolve('refreshed'); // a refresh finished while this request was out
    this.inflight ??= this.refresh(current.refreshToken).finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  /** One `POST /auth/refresh`; never retried (rule 3). */
  private async refresh(refreshToken: string): Promise<RefreshOutcome> {
    const response = await this.baseFetch(
      new Request(this.refreshUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ refreshToken } satisfies components['schemas']['RefreshInput']),
      }),
    );
    if (response.ok) {
      const pair = (await response.json()) as components['schemas']['TokenPair'];
      this.store.set({ accessToken: pair.accessToken, refreshToken: pair.refreshToken });
      return 'refreshed';
    }
    if (response.status === 401 || response.status === 403) {
      // Only end the state that failed: another client sharing the store may have stored a fresh pair meanwhile.
      if (this.store.get()?.refreshToken === refreshToken) {
        this.store.set(null);
        this.options.onLoggedOut?.({ status: response.status, response });
      }
      return 'loggedOut';
    }
    await response.body?.cancel();
    // 409: the token was rotated by a concurrent request, which stored (or will store) the pair to use; not a logout.
    return response.status === 409 ? 'conflict' : 'failed';
  }
}

const IDEMPOTENCY_KEY = 'idempotency-key';

/**
 * POST and PATCH under /api get an `Idempotency-Key` (a fresh UUID) unless the caller set one: every repetition of
 * the request by this client (after a refresh, after a lost answer) carries the same key, so it runs at most once.
 */
function withIdempotencyKey(request: Request): Request {
  const path = new URL(request.url).pathname;
  // POST /api/v1/api-keys keeps no key (its answer holds a secret shown once): a repeat of it would create a second key.
  if (
    (request.method !== 'POST' && request.method !== 'PATCH') ||
    request.headers.has(IDEMPOTENCY_KEY) ||
    !path.startsWith('/api/') ||
    path.endsWith('/api-keys')
  ) {
    return request;
  }
  const next = new Request(request);
  next.headers.set(IDEMPOTENCY_KEY, crypto.randomUUID());
  return next;
}

/** Whether a 409 is the server's "this Idempotency-Key is still running" (code 40901), read from a copy. */
async function isKeyInUse(response: Response): Promise<boolean> {
  const body = (await response
    .clone()
    .json()
    .catch(() => null)) as { code?: unknown } | null;
  return body?.code === 40901;
}

function withBearer(request: Request, accessToken: string): Request {
  const next = new Request(request);
  next.headers.set('authorization', `Bearer ${accessToken}`);
  return next;
}
