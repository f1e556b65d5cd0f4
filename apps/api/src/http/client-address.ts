// The client address behind `TRUST_PROXY`: one trust function for Fastify's `request.ip` and for raw WebSocket upgrades.
import proxyAddr from '@fastify/proxy-addr';
import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';

/**
 * Which hops of `X-Forwarded-For` to believe: none (false), all (true), the first N (a hop count), or those from the
 * listed proxy addresses/CIDRs. Given to Fastify as a function: Fastify 5 given a bare number trusts no header at all.
 */
export function trustProxyFunction(trustProxy: boolean | number | string): (address: string, hop: number) => boolean {
  if (trustProxy === true) return () => true;
  if (trustProxy === false) return () => false;
  if (typeof trustProxy === 'number') return (_address, hop) => hop < trustProxy;
  return proxyAddr.compile(trustProxy.split(',').map((entry) => entry.trim()));
}

/**
 * The client address of a raw request (a WebSocket upgrade, which never becomes a Fastify request) with the semantics
 * of Fastify's `request.ip` under the same `trustProxy`, normalised as the rate limiter does (IPv6 by /64).
 */
export function addressResolver(trustProxy: boolean | number | string): (request: IncomingMessage) => string {
  const trust = trustProxyFunction(trustProxy);
  return (request) => {
    const addresses = proxyAddr.all(request, trust);
    return normalizeIP(addresses[addresses.length - 1] ?? request.socket.remoteAddress ?? 'unknown');
  };
}

/** The client's address (IPv6 by /64, as @fastify/rate-limit does); `request.ip` honours TRUST_PROXY. */
export const clientAddress = (request: FastifyRequest): string => normalizeIP(request.ip);

/** The default bucket's client: the verified user, else the IP. */
export function clientKey(request: FastifyRequest): string {
  const principal = request.principal;
  if (principal?.kind === 'user') return `user:${principal.userId}`;
  const ip = clientAddress(request);
  return principal?.kind === 'service' ? `service:${ip}` : `ip:${ip}`;
}
