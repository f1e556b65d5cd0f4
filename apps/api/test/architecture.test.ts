// The floors of ARCHITECTURE.md, checked on the source: every relative import of apps/api/src runs to its own floor or
// one below, never up (a door importing a cross-cutting plugin, the domain importing a door, a store importing auth).
import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../src/paths.js';

const SOURCE = path.join(repoRoot, 'apps/api/src');

/** The floor of a file of apps/api/src by where it sits: higher floors may import lower ones. */
function floorOf(file: string): number {
  const [top] = file.split('/');
  if (file === 'app.ts' || file === 'main.ts') return 5;
  if (top === 'plugins') return 4; // cross-cutting concerns, registered by app.ts
  if (top === 'rest' || top === 'graphql') return 3; // the two doors
  if (top === 'rate-limits') return 2.5; // the buckets both doors count (sign-up on every transport), owned by neither
  // The domain, in three steps: services (and the start-up bootstrap) use identity and the collection conventions,
  // which use neither the services nor each other.
  if (top === 'services' || top === 'bootstrap') return 2.2;
  if (top === 'auth') return 2.1;
  if (top === 'collections') return 2;
  if (top === 'shared-state') return 1; // ports and their memory and Redis backends
  if (top === 'mail') return 1; // how mail leaves (SMTP, the outbox) and its delivery queue
  return 0; // the ground floor: bounds/ (the stores' bounds and the primitives they are made of), errors/, config/ and its generated/ validator, contract/ (the contract at run time), http/, paths.ts, …
}

/** Every relative import of apps/api/src, as `from → to` paths under it (`.ts` files). */
function relativeImports(): { from: string; to: string }[] {
  return sourceFiles(SOURCE).flatMap((file) => {
    const from = path.relative(SOURCE, file);
    return [...readFileSync(file, 'utf8').matchAll(/from '(\.{1,2}\/[^']+)'/g)].map(([, specifier]) => ({
      from,
      to: path.relative(SOURCE, path.resolve(path.dirname(file), specifier!)).replace(/\.js$/, '.ts'),
    }));
  });
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((entry) => {
    const full = path.join(directory, entry);
    return statSync(full).isDirectory() ? sourceFiles(full) : full.endsWith('.ts') ? [full] : [];
  });
}

describe('floors', () => {
  it('no import of apps/api/src runs up a floor', () => {
    const upward = relativeImports().filter(({ from, to }) => floorOf(to) > floorOf(from));
    expect(upward.map(({ from, to }) => `${from} → ${to}`)).toEqual([]);
  });

  it('neither door imports the other: what both need lives below them (rate-limits/, services/, auth/)', () => {
    const door = (file: string) => file.split('/')[0];
    const crossing = relativeImports().filter(
      ({ from, to }) => ['rest', 'graphql'].includes(door(from)!) && ['rest', 'graphql'].includes(door(to)!) && door(from) !== door(to),
    );
    expect(crossing.map(({ from, to }) => `${from} → ${to}`)).toEqual([]);
  });

  it('knows every top-level folder of apps/api/src (a new one must be given its floor)', () => {
    const folders = readdirSync(SOURCE).filter((entry) => statSync(path.join(SOURCE, entry)).isDirectory());
    expect(folders.sort()).toEqual([
      'auth',
      'bootstrap',
      'bounds',
      'collections',
      'config',
      'contract',
      'errors',
      'generated',
      'graphql',
      'http',
      'mail',
      'plugins',
      'rate-limits',
      'rest',
      'services',
      'shared-state',
    ]);
  });
});

describe('the SPEC the product is built to', () => {
  // The steering repository's shared/ sits beside the checkout (and beside CI's clone): docs/SPEC.md is its copy.
  const given = path.join(repoRoot, '..', 'shared', 'SPEC.md');
  const check = existsSync(given) ? it : it.skip;
  check('docs/SPEC.md is identical to the SPEC given (../shared/SPEC.md)', () => {
    expect(readFileSync(path.join(repoRoot, 'docs/SPEC.md'), 'utf8')).toBe(readFileSync(given, 'utf8'));
  });
});
