// The embedded database's first data directory, for the production build (scripts/build.mjs runs this): the migrated
// template (packages/db/src/migrated-template.ts, built once per set of migrations) written out as a data directory at
// the path given, which a first start copies (packages/db/src/embedded/pglite-worker.js).
import { rm } from 'node:fs/promises';
import { writeMigratedDataDirectory } from '../packages/db/src/migrated-template.js';

const target = process.argv[2];
if (!target) throw new Error('usage: tsx scripts/pglite-initial.ts <directory>');
await rm(target, { recursive: true, force: true });
await writeMigratedDataDirectory(target);
