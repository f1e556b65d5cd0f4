// GraphQL document caches bounded in bytes (SPEC §0.2): Yoga's parse cache and the fast path's memo, keyed by a client's
// document text, keep at most GRAPHQL_DOCUMENT_CACHE_MAX_BYTES each, no text over GRAPHQL_DOCUMENT_CACHE_MAX_TEXT, for an
// hour at most (Yoga's own TTL). lru-cache does the bounding (`maxSize`, `maxEntrySize`, `ttl`).
import { LRUCache } from 'lru-cache';
import type { StoreBounds } from '../config/store-bounds.js';
import type { StoreRegistry } from './stores.js';

/**
 * Bytes an entry is taken to hold per character of its text: a parsed document measured ~108 bytes of heap per
 * character of a dense query (its AST with locations) beside the text itself; comments and blanks hold less.
 */
export const BYTES_PER_CHARACTER = 128;
/** Yoga's own TTL for its parse cache (graphql-yoga `_createLRUCache`). */
export const DOCUMENT_TTL_MS = 3_600_000;

/** A cache keyed by document text, bounded by the estimate of what its entries hold. */
export function documentCache<V extends object>(bounds: StoreBounds): LRUCache<string, V> {
  // bound: GRAPHQL_DOCUMENT_CACHE_MAX_BYTES, GRAPHQL_DOCUMENT_CACHE_MAX_TEXT
  return new LRUCache<string, V>({
    maxSize: bounds.documentCacheBytes,
    maxEntrySize: Math.min(bounds.documentCacheBytes, bounds.documentCacheMaxText * BYTES_PER_CHARACTER),
    sizeCalculation: (_value, text) => Math.max(1, text.length * BYTES_PER_CHARACTER),
    ttl: DOCUMENT_TTL_MS,
  });
}

/** Declares a document cache in the app's registry. */
export function declareDocumentCache(
  stores: StoreRegistry,
  name: string,
  what: string,
  cache: { size: number; calculatedSize: number },
  bounds: StoreBounds,
): void {
  stores.declare({
    name,
    home: 'memory',
    scope: 'store',
    maxEntries: Math.floor(bounds.documentCacheBytes / BYTES_PER_CHARACTER),
    maxBytes: bounds.documentCacheBytes,
    ttlMs: DOCUMENT_TTL_MS,
    perClient: `${what}; a text over GRAPHQL_DOCUMENT_CACHE_MAX_TEXT characters is not kept (parsed again when sent again)`,
    atBound: 'the least recently used documents are evicted (a cache: a document evicted is parsed again)',
    config: ['GRAPHQL_DOCUMENT_CACHE_MAX_BYTES', 'GRAPHQL_DOCUMENT_CACHE_MAX_TEXT'],
    size: () => ({ entries: cache.size, bytes: cache.calculatedSize }),
  });
}
