// Types of pglite-extensions.js (plain JS so that the schema-engine bridge and the embedded database's worker run it as is).
import type { Extension } from '@electric-sql/pglite';

export const PGLITE_EXTENSIONS: { pg_trgm: Extension };
