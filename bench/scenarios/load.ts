// One HTTP request shape driven by autocannon: a timed run (req/s, latency percentiles) or a fixed number of requests.
import autocannon from 'autocannon';
import { processCpuMs } from '../cpu.js';

export interface RequestShape {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  /** Bearer token sent in `authorization`. */
  token?: string;
}

export interface LoadFigures {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  /** Requests answered with another status than 2xx, plus connection errors and timeouts. */
  failures: number;
  /** CPU (user + system) the server process used per answered request: unlike req/s, not shared with other load. */
  cpuUsPerRequest: number;
}

function options(base: string, request: RequestShape) {
  return {
    url: `${base}${request.path}`,
    method: request.method,
    headers: {
      'content-type': 'application/json',
      ...(request.token ? { authorization: `Bearer ${request.token}` } : {}),
    },
    ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
  };
}

/** `connections` concurrent clients for `seconds` against the server of process `pid`. */
export async function timedLoad(base: string, pid: number, request: RequestShape, seconds: number, connections: number): Promise<LoadFigures> {
  const cpuBefore = processCpuMs(pid);
  const result = await autocannon({ ...options(base, request), connections, duration: seconds });
  const cpuMs = processCpuMs(pid) - cpuBefore;
  return {
    cpuUsPerRequest: result.requests.total ? Math.round((cpuMs * 1000) / result.requests.total) : NaN,
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}

/** Exactly `amount` requests, all answered when this resolves; returns how many succeeded (2xx). */
export async function countedLoad(base: string, request: RequestShape, amount: number, connections = 4): Promise<number> {
  const result = await autocannon({ ...options(base, request), connections, amount });
  return result['2xx'];
}
