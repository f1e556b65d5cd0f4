// Several API processes sharing one PostgreSQL database and one Redis, as behind a load balancer, plus HTTP helpers.
import { randomBytes, randomUUID } from 'node:crypto';
import { sign } from '../../src/auth/credentials/signature.js';
import { startApi, startPostgres, startRedis, TEST_METRICS_TOKEN, type ApiProcess, type PostgresServer, type RedisServer } from './processes.js';

export interface Cluster {
  postgres: PostgresServer;
  redis: RedisServer;
  databaseUrl: string;
  instances: ApiProcess[];
  /** The secrets every instance shares (tokens issued by one verify on the others). */
  secrets: { access: string; refresh: string; session: string; signing: string };
  destroy(): Promise<void>;
}

const secret = () => randomBytes(32).toString('base64url');

/** PostgreSQL (a fresh migrated database), Redis, and `count` instances with the same secrets and REDIS_URL. */
export async function startCluster(count: number, env: Record<string, string> = {}): Promise<Cluster> {
  const [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
  const secrets = { access: secret(), refresh: secret(), session: secret(), signing: secret() };
  const instances: ApiProcess[] = [];
  const destroy = async () => {
    await Promise.allSettled(instances.map((instance) => instance.stop(10_000)));
    await Promise.allSettled([postgres.destroy(), redis.destroy()]);
  };
  try {
    const databaseUrl = await postgres.createDatabase();
    const shared = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      JWT_ACCESS_SECRET: secrets.access,
      JWT_REFRESH_SECRET: secrets.refresh,
      SESSION_SECRET: secrets.session,
      SIGNING_SECRET: secrets.signing,
      ...env,
    };
    // Started one after the other: 2 cores, and each start compiles the app.
    for (let i = 0; i < count; i++) instances.push(await startApi(shared));
    return { postgres, redis, databaseUrl, instances, secrets, destroy };
  } catch (error) {
    await destroy();
    throw error;
  }
}

export interface HttpAnswer<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** One JSON request to `base`; the body is parsed when there is one. */
export async function call<T = any>(
  base: string,
  method: string,
  url: string,
  options: { body?: unknown; token?: string; headers?: Record<string, string> } = {},
): Promise<HttpAnswer<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(`${base}${url}`, {
    method,
    headers,
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

export const PASSWORD = 'cluster-password-1';

export interface SignedUp {
  id: number;
  email: string;
  accessToken: string;
  refreshToken: string;
}

/** Signs a user up and logs in, both through `base`. */
export async function signUp(base: string, name = 'Member'): Promise<SignedUp> {
  const email = `${name.toLowerCase().replace(/\W+/g, '-')}-${randomUUID().slice(0, 8)}@example.com`;
  const created = await call(base, 'POST', '/api/v1/users', { body: { name, email, password: PASSWORD } });
  if (created.status !== 201) throw new Error(`sign-up: ${created.status} ${JSON.stringify(created.body)}`);
  const tokens = await call(base, 'POST', '/login', { body: { email, password: PASSWORD } });
  if (tokens.status !== 200) throw new Error(`login: ${tokens.status} ${JSON.stringify(tokens.body)}`);
  return { id: created.body.data.id, email, accessToken: tokens.body.accessToken, refreshToken: tokens.body.refreshToken };
}

/** `url` signed with the cluster's SIGNING_SECRET (SPEC §3), with a fresh nonce unless one is given, over `body` as sent. */
export function signedUrl(signingSecret: string, method: string, url: string, nonce: string = randomUUID(), body?: string): string {
  const unsigned = `${url}${url.includes('?') ? '&' : '?'}timestamp=${Date.now()}&nonce=${encodeURIComponent(nonce)}`;
  return `${unsigned}&signature=${sign(signingSecret, method, unsigned, body)}`;
}

/** The value of a gauge or counter line of /metrics (summed over its label sets), 0 when absent. */
export async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}` } })).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}
