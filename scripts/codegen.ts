// `pnpm codegen`: regenerates every contract-derived file (scripts/contracts/generate.ts lists them) from schema.graphql and
// openapi.yaml, then the Prisma client from prisma/schema.prisma (`pnpm db:generate`), so that a model change reaches the
// server's types and queries with the same one command (a stale client answers 500 on the new column).
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generateContracts, repoRoot } from './contracts/generate.js';

for (const file of await generateContracts()) {
  const target = path.join(repoRoot, file.path);
  await mkdir(path.dirname(target), { recursive: true });
  await writeFile(target, file.content);
  console.log(`wrote ${file.path}`);
}

const prisma = spawnSync(
  process.execPath,
  [path.join(repoRoot, 'node_modules/prisma/build/index.js'), 'generate', '--config', 'prisma/prisma.config.ts'],
  {
    cwd: repoRoot,
    encoding: 'utf8',
  },
);
if (prisma.status !== 0) {
  console.error(prisma.stdout, prisma.stderr);
  process.exit(1);
}
console.log('wrote the Prisma client (packages/db/src/generated/prisma, from prisma/schema.prisma)');
