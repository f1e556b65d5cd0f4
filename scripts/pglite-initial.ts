// The embedded database's first data directory, for the production build (scripts/build.mjs runs this): the migrated
// template (packages/db/src/migrated-template.ts, built once per set of migrations) copied to the path given.
import { copyFile } from 'node:fs/promises';
import { migratedTemplateFile } from '../packages/db/src/migrated-template.js';

const target = process.argv[2];
if (!target) throw new Error('usage: tsx scripts/pglite-initial.ts <file.tar>');
await copyFile(await migratedTemplateFile(), target);
