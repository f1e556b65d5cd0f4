// Fastify's callback-form hooks over a value that is there at once or arrives later (no promise per request when it is there).
import type { FastifyError } from 'fastify';

/**
 * Calls `use` with `value`, then `done` with what `use` returns (an error fails the request): at once when `value` is
 * already there, else when its promise settles. A rejection fails the request, also one without an error value
 * (Fastify's async hooks refuse those too), so a request is never let through by a failure nobody named.
 */
export function settleHook<T>(
  value: T | Promise<T>,
  use: (value: T) => Error | undefined,
  done: (error?: FastifyError | Error) => void,
  failure: string,
): void {
  if (!(value instanceof Promise)) return done(use(value));
  value.then(
    (settled) => done(use(settled)),
    (error: unknown) => done(error instanceof Error ? error : new Error(`${failure}: ${String(error)}`)),
  );
}
