// The shape of a rate-limit bucket, keyed on an HTTP request: shared by the limiter (plugins/rate-limit.ts), the buckets of rate-limits/buckets.ts and auth/address-trust.ts.
import type { FastifyRequest } from 'fastify';
import type { AppError } from '../errors/app-error.js';

/** A rate-limit bucket: `max` requests per `windowMs` for each client key. */
export interface RateBucket {
  /** Prefix of the bucket's counter keys (distinct per bucket). */
  name: string;
  max: number;
  windowMs: number;
  /** The client within the bucket (called once body parsing and authentication are done). */
  key: (request: FastifyRequest) => string;
  /**
   * `'failure'`: only answers with this status (401 for login) use up the bucket; a request is still refused while the
   * bucket is exceeded. Default: every request counts.
   */
  countOnlyStatus?: number;
  /** With `countOnlyStatus`: only answers of that status for which this holds use the bucket up (a password refused). */
  countOnlyIf?: (request: FastifyRequest) => boolean;
  /**
   * With `countOnlyStatus`: a request for which this holds is never refused by this bucket, however many failures it
   * holds (the per-account login guard and an address its owner has logged in from, SPEC §3.3).
   */
  exemptIf?: (request: FastifyRequest) => boolean | Promise<boolean>;
  /**
   * With `countOnlyStatus`: the error a refusal by this bucket answers instead of the plain RATE_LIMITED, called once per
   * refused request (the per-account login guard's, which also offers the owner a way in: SPEC §3.3).
   */
  refusal?: (request: FastifyRequest) => AppError;
}
