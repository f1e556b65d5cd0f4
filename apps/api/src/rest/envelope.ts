// Success envelopes of SPEC §4: `{code: 0, message: "ok", data}`, for one resource or a page of them.
import type { PageResult } from '../collections/page.js';
import { selectFields } from '../collections/query.js';

export function ok<Data>(data: Data): { code: 0; message: 'ok'; data: Data } {
  return { code: 0, message: 'ok', data };
}

/** A page of resources as the page/offset or the cursor envelope, each item reduced to `fields`. */
export function pageEnvelope<Row, Item extends { id: number }>(result: PageResult<Row>, represent: (row: Row) => Item, fields: string[] | undefined) {
  const items = result.items.map((row) => selectFields(represent(row), fields));
  // `paging` names the shape of `data`: the contract's discriminator between the two envelopes.
  if (result.mode === 'cursor') {
    return { code: 0, message: 'ok', paging: 'cursor', data: { items, nextCursor: result.nextCursor, hasMore: result.hasMore } } as const;
  }
  const { total, page, pageSize, totalPages, totalExact } = result;
  return { code: 0, message: 'ok', paging: 'page', data: { items, total, page, pageSize, totalPages, totalExact } } as const;
}
