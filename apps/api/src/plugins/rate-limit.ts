// @fastify/rate-limit, with limits set per route (`config.rateLimit`); counters in memory in one process.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

async function rateLimitPlugin(app: FastifyInstance): Promise<void> {
  await app.register(rateLimit, { global: false });
}

export default fp(rateLimitPlugin, { name: 'rate-limit' });
