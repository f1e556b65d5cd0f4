// The bounds the code reads from the contract (scripts/contracts/bounds.ts → packages/contracts/src/generated/bounds.ts):
// the committed file is what codegen renders (the staleness step of `pnpm contracts:check` compares exactly this), a
// bound moved in openapi.yaml moves the constant, and a contract that states one bound twice, differently, is refused.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from '@jest/globals';
import { BULK_MAX, ENUM_VALUES, PAGE_SIZE_MAX } from '../../packages/contracts/src/index.js';
import { boundValues, enumValues, generateBounds } from '../contracts/bounds.js';
import { parseYaml } from '../contracts/yaml.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TARGET = 'packages/contracts/src/generated/bounds.ts';
const work = mkdtempSync(path.join(os.tmpdir(), 'contract-bounds-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const readRepo = (file: string) => readFileSync(path.join(repoRoot, file), 'utf8');
const BULK_UPDATE_IDS = '        ids:\n          type: array\n          minItems: 1\n          maxItems: 100\n';
const BATCH_USERS = '        users:\n          type: array\n          minItems: 1\n          maxItems: 100\n';

function replaceOnce(text: string, from: string, to: string): string {
  expect(text.split(from)).toHaveLength(2);
  return text.replace(from, to);
}

/** A copy of the two contracts, openapi.yaml edited by `edit`. */
function copyOfContracts(name: string, edit: (yaml: string) => string): string {
  const root = path.join(work, name);
  cpSync(path.join(repoRoot, 'schema'), path.join(root, 'schema'), { recursive: true });
  cpSync(path.join(repoRoot, 'openapi'), path.join(root, 'openapi'), { recursive: true });
  writeFileSync(path.join(root, 'openapi/openapi.yaml'), edit(readRepo('openapi/openapi.yaml')));
  return root;
}

describe('bounds generated from the contract', () => {
  test('the committed file is what `pnpm codegen` renders, and the staleness step of the gate compares it', async () => {
    expect((await generateBounds(repoRoot)).content).toBe(readRepo(TARGET));
    // `pnpm codegen` writes, and `pnpm contracts:check` compares, every file of generateContracts(). Asked in a plain Node
    // process: graphql-codegen's plugins do not load in jest's module sandbox.
    const listing = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        "const { generateContracts } = await import('./scripts/contracts/generate.ts'); console.log(JSON.stringify((await generateContracts()).map((file) => file.path)));",
      ],
      // A hang detector, not a deadline (the listing takes seconds, many more on a loaded machine): spawnSync blocks
      // jest's own timers, so this bound is the one that fires, as ETIMEDOUT below.
      { cwd: repoRoot, encoding: 'utf8', timeout: 180_000 },
    );
    expect(listing.error).toBeUndefined();
    expect(listing.stderr).toBe('');
    expect(JSON.parse(listing.stdout)).toContain(TARGET);
    // What the server imports is the contract's: the page size, the batch size, the order statuses in their order.
    expect([PAGE_SIZE_MAX, BULK_MAX, ENUM_VALUES.OrderStatus]).toEqual([100, 100, ['pending', 'paid', 'shipped', 'cancelled']]);
  }, 200_000);

  test('a batch size moved in both places of openapi.yaml moves BULK_MAX (the committed file is then stale)', async () => {
    const root = copyOfContracts('bulk-50', (yaml) =>
      replaceOnce(replaceOnce(yaml, BULK_UPDATE_IDS, BULK_UPDATE_IDS.replace('100', '50')), BATCH_USERS, BATCH_USERS.replace('100', '50')),
    );
    const { content } = await generateBounds(root);
    expect(content).toContain('\nexport const BULK_MAX = 50;\n');
    expect(content).not.toBe(readRepo(TARGET));
  });

  test('a batch size moved in one place only is refused, naming both places and values', () => {
    const document = parseYaml(replaceOnce(readRepo('openapi/openapi.yaml'), BULK_UPDATE_IDS, BULK_UPDATE_IDS.replace('100', '50')));
    expect(() => boundValues(document)).toThrow(
      'BULK_MAX: the places that state it disagree: #/components/schemas/BatchCreateUsersInput/properties/users/maxItems is 100, ' +
        '#/components/schemas/BulkUpdateUsersInput/properties/ids/maxItems is 50',
    );
  });

  test('an enum the two contracts list differently is refused', () => {
    const document = parseYaml(readRepo('openapi/openapi.yaml'));
    const sdl = replaceOnce(readRepo('schema/schema.graphql'), '  USER\n}', '  USER\n  "A guest."\n  GUEST\n}');
    expect(() => enumValues(document, sdl)).toThrow('Role: schema/schema.graphql lists ADMIN, USER, GUEST; openapi/openapi.yaml lists ADMIN, USER');
  });
});
