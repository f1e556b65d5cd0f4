// @ts-check
// The PostgreSQL extensions the migrations create (pg_trgm: the search's trigram indexes, SPEC §4 "At scale"). PGlite
// ships contrib extensions as bundles it loads only when named at creation: every opener passes these.
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';

/** The `extensions` option of every PGlite that replays or serves the migrations. */
export const PGLITE_EXTENSIONS = { pg_trgm };
