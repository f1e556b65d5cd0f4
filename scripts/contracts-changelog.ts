// `pnpm contracts:changelog [--base <rev>] [--write]`: the consumers' changelog of both contracts against a base revision
// (default: as `pnpm contracts:check` picks it), as Markdown on standard output; `--write` also refreshes
// docs/CHANGELOG-API.md, which the server serves at /docs/changelog.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { contractAt, defaultBaseRev, GRAPHQL_CONTRACT, OPENAPI_CONTRACT } from './contracts/breaking.js';
import { changelog } from './contracts/changelog.js';
import { withoutSeparator } from './contracts/evolution.js';
import { repoRoot } from './contracts/generate.js';
import { resolveRev } from './contracts/git.js';

const CHANGELOG_PATH = 'docs/CHANGELOG-API.md';

const { values } = parseArgs({
  args: withoutSeparator(process.argv.slice(2)),
  options: { base: { type: 'string' }, write: { type: 'boolean', default: false } },
});
const base = values.base ?? (await defaultBaseRev(repoRoot));
const commit = base === undefined ? undefined : await resolveRev(repoRoot, base);
if (base === undefined || commit === undefined) {
  console.error(base === undefined ? 'no base revision: pass --base <rev> (or set CONTRACTS_BASE)' : `base revision ${base} does not exist`);
  process.exit(2);
}
const at = async (rev: string | undefined) => {
  const [openapi, graphql] = await Promise.all([contractAt(repoRoot, rev, OPENAPI_CONTRACT), contractAt(repoRoot, rev, GRAPHQL_CONTRACT)]);
  return { ...(openapi === undefined ? {} : { openapi }), ...(graphql === undefined ? {} : { graphql }) };
};
const markdown = await changelog(await at(base), await at(undefined), `\`${base}\` (${commit.slice(0, 12)})`);
process.stdout.write(markdown);
if (values.write) {
  await writeFile(path.join(repoRoot, CHANGELOG_PATH), markdown);
  console.error(`wrote ${CHANGELOG_PATH}`);
}
