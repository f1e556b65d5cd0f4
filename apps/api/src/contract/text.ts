// Text as PostgreSQL stores it: shared by the contract's validation (json-schema.ts) and the collection conventions'
// checks of search terms and cursors (collections/), so neither imports the other.

// An unpaired UTF-16 surrogate (String.prototype.isWellFormed is ES2024, beyond this workspace's lib).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Text PostgreSQL can store: no NUL (a `text` value cannot hold U+0000: the database refused it with a 500) and no
 * unpaired surrogate (silently stored as U+FFFD, so what was read back differed from what was written).
 */
export function isStorableText(value: string): boolean {
  return !value.includes('\u0000') && !LONE_SURROGATE.test(value);
}
