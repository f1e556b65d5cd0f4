// One HTTP request shape under load: a timed run (req/s, latency percentiles; wrk when on PATH, as the issue measured,
// else autocannon) or a fixed number of requests (autocannon).
import autocannon from 'autocannon';
import { randomUUID } from 'node:crypto';
import { execFile, execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { processCpuMs } from '../cpu.js';

export interface RequestShape {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  /** Bearer token sent in `authorization`. */
  token?: string;
  /** Further headers, the same on every request (e.g. `if-none-match`). */
  headers?: Record<string, string>;
  /** A header given a value of its own on every request (e.g. `idempotency-key`). */
  uniqueHeader?: string;
}

export interface LoadFigures {
  /** Requests answered in the run. */
  requests: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  /** Requests answered with another status than 2xx, plus connection errors and timeouts. */
  failures: number;
  /** CPU (user + system) the server process used per answered request: unlike req/s, not shared with other load. */
  cpuUsPerRequest: number;
}

function options(base: string, request: RequestShape) {
  const unique = request.uniqueHeader;
  return {
    url: `${base}${request.path}`,
    method: request.method,
    headers: {
      'content-type': 'application/json',
      ...(request.token ? { authorization: `Bearer ${request.token}` } : {}),
      ...request.headers,
    },
    ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
    ...(unique
      ? { requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, headers: { ...req.headers, [unique]: randomUUID() } }) }] }
      : {}),
  };
}

/** The load generator of timed runs: wrk (C, multi-threaded, what issue 11 measured with) when on PATH, else autocannon. */
export const loadGenerator: 'wrk' | 'autocannon' = (() => {
  if (process.env.BENCH_LOADGEN === 'autocannon') return 'autocannon';
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return 'wrk';
  } catch (error) {
    // wrk --version prints its banner and exits 1: it is there when the spawn itself worked.
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'autocannon' : 'wrk';
  }
})();

const wrkScript = path.join(import.meta.dirname, 'wrk.lua');

interface WrkSummary {
  requests: number;
  durationUs: number;
  status: number;
  connect: number;
  read: number;
  write: number;
  timeout: number;
  p50Us: number;
  p99Us: number;
}

async function wrkLoad(base: string, request: RequestShape, seconds: number, connections: number) {
  const threads = Math.max(1, Math.min(os.availableParallelism(), connections));
  const { stdout } = await promisify(execFile)(
    'wrk',
    [`-t${threads}`, `-c${connections}`, `-d${seconds}s`, '--latency', '--timeout', '10s', '-s', wrkScript, `${base}${request.path}`],
    {
      env: {
        ...process.env,
        WRK_METHOD: request.method,
        WRK_BODY: request.body === undefined ? '' : JSON.stringify(request.body),
        WRK_TOKEN: request.token ?? '',
        WRK_HEADERS: Object.entries(request.headers ?? {})
          .map(([name, value]) => `${name}: ${value}`)
          .join('\n'),
        WRK_UNIQUE_HEADER: request.uniqueHeader ?? '',
      },
    },
  );
  const line = stdout.split('\n').find((l) => l.startsWith('WRK_JSON '));
  if (!line) throw new Error(`wrk printed no summary:\n${stdout}`);
  const summary = JSON.parse(line.slice('WRK_JSON '.length)) as WrkSummary;
  return {
    total: summary.requests,
    requestsPerSecond: Math.round(summary.requests / (summary.durationUs / 1e6)),
    p50: Math.round(summary.p50Us / 100) / 10,
    p99: Math.round(summary.p99Us / 100) / 10,
    failures: summary.status + summary.connect + summary.read + summary.write + summary.timeout,
  };
}

async function autocannonLoad(base: string, request: RequestShape, seconds: number, connections: number) {
  const result = await autocannon({ ...options(base, request), connections, duration: seconds });
  return {
    total: result.requests.total,
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: result.non2xx - result['3xx'] + result.errors + result.timeouts,
  };
}

/** `connections` concurrent clients for `seconds` against the server of process `pid`. */
export async function timedLoad(base: string, pid: number, request: RequestShape, seconds: number, connections: number): Promise<LoadFigures> {
  const cpuBefore = processCpuMs(pid);
  const { total, ...figures } = await (loadGenerator === 'wrk' ? wrkLoad : autocannonLoad)(base, request, seconds, connections);
  const cpuMs = processCpuMs(pid) - cpuBefore;
  return { requests: total, cpuUsPerRequest: total ? Math.round((cpuMs * 1000) / total) : NaN, ...figures };
}

/** Exactly `amount` requests, all answered when this resolves; returns how many succeeded (2xx). */
export async function countedLoad(base: string, request: RequestShape, amount: number, connections = 4): Promise<number> {
  const result = await autocannon({ ...options(base, request), connections, amount });
  return result['2xx'] + result['3xx']; // a 304 is the answer a revalidation wants
}
