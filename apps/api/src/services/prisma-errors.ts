// Turns the Prisma errors a write can expect (unique and foreign-key violations, missing rows) into AppErrors.
import { AppError, type FieldError } from '../errors.js';

export interface ExpectedFailures {
  /** Unique violation (P2002) → 409 naming this field. */
  unique?: FieldError;
  /** Foreign-key violation (P2003) → 404 with this message. */
  foreignKey?: string;
  /** Record to update/delete not found (P2025) → 404 with this message. */
  missing?: string;
}

export function translatePrismaError(error: unknown, expected: ExpectedFailures): never {
  const code = (error as { code?: unknown }).code;
  if (code === 'P2002' && expected.unique) throw new AppError('CONFLICT', `${expected.unique.field} ${expected.unique.message}`, [expected.unique]);
  if (code === 'P2003' && expected.foreignKey) throw new AppError('NOT_FOUND', expected.foreignKey);
  if (code === 'P2025' && expected.missing) throw new AppError('NOT_FOUND', expected.missing);
  throw error;
}
