// Field rules of SPEC §1, checked in the domain layer so REST and GraphQL refuse the same input the same way.
import { AppError, type FieldError } from '../errors/app-error.js';
import { characters, isStorableText } from '../text.js';

export const EMAIL_MAX = 254;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

type Check = (value: unknown) => string | undefined;

const UNSTORABLE = 'must not contain NUL characters or unpaired surrogates';

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
