// Text as PostgreSQL stores it and as the contract counts it: shared by the domain's field rules (services/validation.ts)
// and the collection conventions' checks of search terms and cursors (collections/), so neither imports the other.

// An unpaired UTF-16 surrogate (String.prototype.isWellFormed is ES2024, beyond this workspace's lib).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Text PostgreSQL can store: no NUL (a `text` value cannot hold U+0000: the database refused it with a 500) and no
 * unpaired surrogate (silently stored as U+FFFD, so what was read back differed from what was written).
 */
export function isStorableText(value: string): boolean {
  return !value.includes('\u0000') && !LONE_SURROGATE.test(value);
}

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
