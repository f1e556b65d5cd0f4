// The floors of ARCHITECTURE.md, checked on the source: every relative import of apps/api/src runs to its own floor or
// one below, never up (a door importing a cross-cutting plugin, the domain importing a door, a store importing auth).
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../src/paths.js';

const SOURCE = path.join(repoRoot, 'apps/api/src');

/** The floor of a file of apps/api/src by where it sits: higher floors may import lower ones. */
function floorOf(file: string): number {
  const [top] = file.split('/');
  if (file === 'app.ts' || file === 'main.ts') return 5;
  if (top === 'plugins') return 4; // cross-cutting concerns, registered by app.ts
  if (top === 'rest' || top === 'graphql') return 3; // the two doors
  // The domain, in three steps: services (and the start-up bootstrap) use identity and the collection conventions,
  // which use neither the services nor each other.
  if (top === 'services' || top === 'bootstrap') return 2.2;
  if (top === 'auth') return 2.1;
  if (top === 'collections') return 2;
  if (top === 'shared-state') return 1; // ports and their memory and Redis backends
  if (top === 'mail') return 1; // how mail leaves (SMTP, the outbox) and its delivery queue
  return 0; // the ground floor: errors/, config.ts and its generated/ validator, client-address.ts, rate-bucket.ts, paths.ts, …
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((entry) => {
    const full = path.join(directory, entry);
    return statSync(full).isDirectory() ? sourceFiles(full) : full.endsWith('.ts') ? [full] : [];
  });
}

describe('floors', () => {
  it('no import of apps/api/src runs up a floor', () => {
    const upward: string[] = [];
    for (const file of sourceFiles(SOURCE)) {
      const from = path.relative(SOURCE, file);
      for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
        const to = path.relative(SOURCE, path.resolve(path.dirname(file), specifier!)).replace(/\.js$/, '.ts');
        if (floorOf(to) > floorOf(from)) upward.push(`${from} → ${to}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('knows every top-level folder of apps/api/src (a new one must be given its floor)', () => {
    const folders = readdirSync(SOURCE).filter((entry) => statSync(path.join(SOURCE, entry)).isDirectory());
    expect(folders.sort()).toEqual([
      'auth',
      'bootstrap',
      'collections',
      'errors',
      'generated',
      'graphql',
      'mail',
      'plugins',
      'rest',
      'services',
      'shared-state',
    ]);
  });
});
