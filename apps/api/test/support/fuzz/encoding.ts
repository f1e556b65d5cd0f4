// URL encoding that never throws: lone surrogates (which fast-check generates) become U+FFFD first.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export const wellFormed = (text: string): string => text.replace(LONE_SURROGATE, '\uFFFD');

export const encode = (text: string): string => encodeURIComponent(wellFormed(text));

/** Byte sequences a client may put in a URL as they are: bad escapes, encoded NUL and slash, overlong UTF-8. */
export const RAW_URL_PIECES = ['%ZZ', '%', '%0', '%00', '%2F', '%5C', '%C0%AF', '%FF', '%E2%82', '+', '%20', '&', '=', ';', '[]', 'a[b]', '%u0041'];
