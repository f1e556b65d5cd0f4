// Types of pglite-extensions.js (plain JS so that the schema-engine bridge and the embedded database's worker run it as is).
import type { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';

export const PGLITE_EXTENSIONS: { pg_trgm: typeof pg_trgm };
