// What every REST handler receives besides its validated input.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services/index.js';

export interface RestContext {
  services: Services;
  request: FastifyRequest;
  reply: FastifyReply;
}
