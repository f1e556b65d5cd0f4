// The error a request gets when a security check needs Redis and Redis does not answer (fail closed: 503, retry later).
import { AppError } from '../errors.js';

export function sharedStateUnavailable(what: string, cause: unknown): AppError {
  const error = new AppError('UNAVAILABLE', `Temporarily unavailable: ${what} (shared state store unreachable); retry shortly`);
  error.cause = cause; // logged by the error handler, never sent
  return error;
}
