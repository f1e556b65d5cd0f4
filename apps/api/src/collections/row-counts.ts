// How many rows `users` and `posts` hold, read from the counters the writes keep (model RowCount, migration
// `scale_indexes`): exact, in the reader's snapshot, and O(1) whatever the table sizes (SPEC §2 `statistics`).
import { PREPARED, type SqlReader } from '@users-posts/db';

/** The tables whose rows are counted by triggers. */
export type CountedTable = 'users' | 'posts';

/** The number of rows of `table`: the sum of its 16 slots. */
export async function countedRows(sql: SqlReader, table: CountedTable): Promise<number> {
  const [row] = await sql.rows<{ rows: number }>(
    `SELECT coalesce(sum(rows), 0)::int AS rows FROM row_counts WHERE table_name = $1`,
    [table],
    PREPARED,
  );
  return row?.rows ?? 0;
}
