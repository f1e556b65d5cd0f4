// @ts-check
// The PostgreSQL extensions the migrations create (pg_trgm: the search's trigram indexes, SPEC §4 "At scale"). PGlite
// ships contrib extensions as bundles it loads only when named at creation: every opener passes these.
import { existsSync } from 'node:fs';
import { pg_trgm as packaged } from '@electric-sql/pglite/contrib/pg_trgm';

/**
 * The production build copies the extension's bundle beside itself (scripts/build.mjs, as PGlite's own files): PGlite
 * looks for it at `../pg_trgm.tar.gz` from its module, which the bundle moved. From source, PGlite's own path holds.
 */
const besideBuild = new URL('./pg_trgm.tar.gz', import.meta.url);
const pg_trgm = existsSync(besideBuild)
  ? {
      ...packaged,
      setup: async (/** @type {any} */ pg, /** @type {any} */ options) => ({ ...(await packaged.setup(pg, options)), bundlePath: besideBuild }),
    }
  : packaged;

/** The `extensions` option of every PGlite that replays or serves the migrations. */
export const PGLITE_EXTENSIONS = { pg_trgm };
