// The errors of a dependency that does not answer: the database (503 / "Database unavailable") and the shared state
// store when a security check needs it (fail closed: 503, retry later).
import { AppError } from './app-error.js';

/** The answer while the database is unreachable: 503 (REST, code 50300), a coded error in GraphQL. */
export const databaseUnavailable = (): AppError => new AppError('UNAVAILABLE', 'Database unavailable');

export function sharedStateUnavailable(what: string, cause: unknown): AppError {
  const error = new AppError('UNAVAILABLE', `Temporarily unavailable: ${what} (shared state store unreachable); retry shortly`);
  error.cause = cause; // logged by the error handler, never sent
  return error;
}
