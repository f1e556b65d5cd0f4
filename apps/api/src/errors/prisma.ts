// Prisma's error codes as AppErrors: the ones any query can meet, and the ones a write expects (unique and foreign-key
// violations, missing rows), which the service names. An unreachable database is to-app-error.ts's.
import { AppError, type FieldError } from './app-error.js';

/** Prisma codes that are the client's doing or the database's load, whichever query met them. */
export function fromPrismaCode(code: unknown): AppError | undefined {
  if (code === 'P2002') return new AppError('CONFLICT', 'A resource with these unique fields already exists');
  if (code === 'P2025') return new AppError('NOT_FOUND');
  // An interactive transaction that waited too long for a connection or ran out of time: the database is saturated.
  if (code === 'P2028') return new AppError('UNAVAILABLE', 'Database busy: try again');
  return undefined;
}

export interface ExpectedFailures {
  /** Unique violation (P2002) → 409 naming this field. */
  unique?: FieldError;
  /** Foreign-key violation (P2003) → 404 with this message. */
  foreignKey?: string;
  /** Record to update/delete not found (P2025) → 404 with this message. */
  missing?: string;
}

/** Rethrows a write's expected Prisma failure as the AppError that names it, anything else as it is. */
export function translatePrismaError(error: unknown, expected: ExpectedFailures): never {
  const code = (error as { code?: unknown }).code;
  if (code === 'P2002' && expected.unique) throw new AppError('CONFLICT', `${expected.unique.field} ${expected.unique.message}`, [expected.unique]);
  if (code === 'P2003' && expected.foreignKey) throw new AppError('NOT_FOUND', expected.foreignKey);
  if (code === 'P2025' && expected.missing) throw new AppError('NOT_FOUND', expected.missing);
  throw error;
}
