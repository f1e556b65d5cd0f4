// Field rules of SPEC §1, checked in the domain layer so REST and GraphQL refuse the same input the same way.
import { AppError, type FieldError } from '../errors/app-error.js';

export const EMAIL_MAX = 254;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

type Check = (value: unknown) => string | undefined;

// An unpaired UTF-16 surrogate (String.prototype.isWellFormed is ES2024, beyond this workspace's lib).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Text PostgreSQL can store: no NUL (a `text` value cannot hold U+0000: the database refused it with a 500) and no
 * unpaired surrogate (silently stored as U+FFFD, so what was read back differed from what was written).
 */
export function isStorableText(value: string): boolean {
  return !value.includes('\u0000') && !LONE_SURROGATE.test(value);
}

const UNSTORABLE = 'must not contain NUL characters or unpaired surrogates';

/**
 * Length in characters (code points), as the contract counts it (JSON Schema's `maxLength`, which Ajv checks on the
 * REST door) and as PostgreSQL's `varchar(n)` does: an emoji is one character, not two UTF-16 units. Counting units
 * made GraphQL refuse a 60-emoji name REST accepts, and accept a 4-emoji password REST refuses.
 */
export function characters(value: string): number {
  let count = value.length;
  for (let i = 0; i < value.length - 1; i += 1) {
    const unit = value.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count -= 1;
        i += 1;
      }
    }
  }
  return count;
}

const text =
  (min: number, max: number): Check =>
  (value) =>
    typeof value !== 'string'
      ? 'must be a string'
      : !isStorableText(value)
        ? UNSTORABLE
        : value.trim().length < min
          ? `must not be empty`
          : characters(value) > max
            ? `must be at most ${max} characters`
            : undefined;

export const rules = {
  name: text(1, 100),
  email: (value: unknown) =>
    typeof value !== 'string'
      ? 'must be a string'
      : characters(value) > EMAIL_MAX
        ? `must be at most ${EMAIL_MAX} characters`
        : !isStorableText(value)
          ? UNSTORABLE
          : EMAIL.test(value)
            ? undefined
            : 'must be an e-mail address',
  password: (value: unknown) =>
    typeof value !== 'string'
      ? 'must be a string'
      : !isStorableText(value)
        ? UNSTORABLE
        : characters(value) < 8 || characters(value) > 128
          ? 'must be 8 to 128 characters'
          : undefined,
  age: (value: unknown) =>
    value === null
      ? undefined
      : !Number.isInteger(value) || (value as number) < 0 || (value as number) > 150
        ? 'must be an integer from 0 to 150'
        : undefined,
  title: text(1, 200),
  content: text(1, 50_000),
  body: text(1, 5_000),
} satisfies Record<string, Check>;

/** Checks the present fields of `input` (undefined = absent) and throws one VALIDATION_FAILED naming each failure. */
export function validate(input: Record<string, unknown>, checks: Partial<Record<keyof typeof rules, true>>, prefix = ''): void {
  const fields: FieldError[] = [];
  for (const name of Object.keys(checks) as (keyof typeof rules)[]) {
    if (input[name] === undefined) continue;
    const message = rules[name](input[name]);
    if (message) fields.push({ field: `${prefix}${name}`, message });
  }
  if (fields.length) throw new AppError('VALIDATION_FAILED', 'Validation failed', fields);
}

/** Throws VALIDATION_FAILED naming required fields that are missing. */
export function requireFields(input: Record<string, unknown>, names: string[], prefix = ''): void {
  const missing = names.filter((name) => input[name] === undefined || input[name] === null);
  if (missing.length) {
    throw new AppError(
      'VALIDATION_FAILED',
      'Validation failed',
      missing.map((name) => ({ field: `${prefix}${name}`, message: 'is required' })),
    );
  }
}
