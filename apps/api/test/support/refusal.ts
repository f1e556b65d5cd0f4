// The AppError a domain function throws, for unit tests that assert what a refusal says (kind, message, fields).
import { AppError } from '../../src/errors/app-error.js';

/** The AppError `run` throws (fails the test when it throws nothing or something else). */
export function refusal(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected a refusal, got an answer');
}
