// Keys from client input, bounded in size before any store keeps them (SPEC §0.2): short keys as they are, long ones as
// their digest, so a store's bytes per entry are fixed whatever a client sends (a 1 MB e-mail is 44 bytes here).
import { createHash } from 'node:crypto';

/** The longest key kept as it is: an address, a user id or an ordinary e-mail with its prefix. */
export const MAX_KEY_LENGTH = 96;

/** `key` when it is short, else `#` and its SHA-256 (base64url; `#` marks it, no digest collides with a short key's form). */
export const boundedKey = (key: string): string => (key.length <= MAX_KEY_LENGTH ? key : `#${createHash('sha256').update(key).digest('base64url')}`);
