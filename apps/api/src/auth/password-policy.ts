// What a new password must be beyond the contract's `Password` (8–128 characters, checked by both doors from
// openapi.yaml): not the account's e-mail, and not among commonly used passwords (SPEC §3.2, NIST SP 800-63B §5.1.1.2).
import { dictionary } from '@zxcvbn-ts/language-common';
import { validationFailed } from '../errors/app-error.js';

/**
 * The zxcvbn-ts project's list of common passwords (from breach corpora, ~49 000 entries), those long enough to pass
 * the length rule: a kept list, not one typed here. Lower-cased, as the comparison is.
 */
let common: Set<string> | undefined;
const commonPasswords = () =>
  (common ??= new Set(dictionary.passwords.filter((password) => password.length >= 8).map((password) => password.toLowerCase())));

/** Why `password` may not be the new password of the account with `email`, or undefined when it may. */
export function weakPasswordReason(password: string, email: string | undefined): string | undefined {
  const folded = password.toLowerCase();
  if (email && (folded === email.toLowerCase() || folded === email.slice(0, email.lastIndexOf('@')).toLowerCase())) {
    return 'must not be the e-mail address';
  }
  if (commonPasswords().has(folded)) return 'is a commonly used password; choose another';
  return undefined;
}

/** 422 naming `field` when `password` may not be the account's new password. */
export function assertStrongPassword(password: string, email: string | undefined, field: string): void {
  const reason = weakPasswordReason(password, email);
  if (reason) throw validationFailed([{ field, message: reason }]);
}
