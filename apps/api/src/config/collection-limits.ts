// How much work a listing may ask of the database (SPEC §4 "At scale"): the offset window and the exact-count bound.
import { COLLECTION_WINDOW } from '@users-posts/contracts';

export interface CollectionLimits {
  /** `EXACT_COUNT_LIMIT`: a page's `total` is counted exactly up to this many matching rows, estimated beyond. */
  exactCountLimit: number;
  /**
   * `MAX_OFFSET`: the most rows a page or offset may skip (OFFSET walks every skipped row); cursor paging has no depth
   * limit. At most the contract's `offset` maximum, which is also its default.
   */
  maxOffset: number;
}

/** SPEC §4's defaults: exact counts up to 10 000 rows, and the contract's offset window. */
export const DEFAULT_COLLECTION_LIMITS: CollectionLimits = { exactCountLimit: 10_000, maxOffset: COLLECTION_WINDOW.maxOffset };

/** What a client reads when its page or offset lies beyond the window: the way on. */
export const beyondOffsetWindow = (limits: CollectionLimits): string =>
  `skips more than ${limits.maxOffset} items: page deeper with cursors (REST \`cursor=\` and each answer's \`nextCursor\`; GraphQL \`postsConnection\`), which have no depth limit`;
