// Which trigrams a search asks the indexes for (search-probe.ts): the rare ones, disjoint and in the term's order.
import { describe, expect, it } from '@jest/globals';
import { columnSample, probePattern, type ColumnSample } from './search-probe.js';

/** A column sample of `rows` rows whose 100 sampled values are `value(i)`, each standing for 1 % of them. */
const sample = (rows: number, value: (i: number) => string): ColumnSample =>
  columnSample(
    rows,
    Array.from({ length: 100 }, (_, i) => ({ text: value(i), share: 0.01 })),
  );

/** A million "userN" names, as pg_stats samples them (every value holds `use` and `ser`). */
const names = sample(1_000_000, (i) => `user${(i * 9973) % 1_000_000}`);

/** Does `pattern` (only `%` as wildcard) match `text`, case-insensitively? */
const likeMatches = (pattern: string, text: string) =>
  new RegExp(
    `^${pattern
      .split('%')
      .map((piece) => piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    'is',
  ).test(text);

describe('the trigrams a search looks up', () => {
  it('leaves out the trigrams common in the column and keeps few rare ones, disjoint and in order', () => {
    const probe = probePattern('user12345', [names]);
    expect(probe).toBeDefined();
    expect(probe).not.toMatch(/use|ser/);
    // Every row the term matches, the probe matches.
    for (const text of ['user12345', 'USER123456', 'xuser12345@example.com'])
      expect({ text, hit: likeMatches(probe!, text) }).toEqual({ text, hit: true });
  });

  it('looks up the whole term when every trigram is rare and one is enough', () => {
    expect(probePattern('zzz', [names])).toBe('%zzz%');
  });

  it('has nothing to choose without statistics, or when every trigram is common', () => {
    expect(probePattern('user12345', [])).toBeUndefined();
    expect(probePattern('user12345', [columnSample(10, [])])).toBeUndefined();
    expect(probePattern('user', [names])).toBeUndefined();
  });

  it("never carries the term's LIKE escapes, and takes pieces from every word in order", () => {
    const titles = sample(10_000_000, (i) => `Post ${i * 99_991} on topic ${i % 997}`);
    const probe = probePattern('100\\% Post 7654321', [titles, titles]);
    expect(probe).toBeDefined();
    expect(probe).not.toContain('\\');
    expect(likeMatches(probe!, 'about 100% post 7654321 here')).toBe(true);
  });

  it('chooses among a bounded number of trigrams, however many the term has (a 200-character term of rare words)', () => {
    // ~180 rare trigrams: their triples alone would be ~950 000 sets to weigh on every request.
    const words = Array.from({ length: 6 }, (_, i) => `${String.fromCharCode(113 + i).repeat(2)}${'0123456789abcdefghijklmnopqrstuv'.slice(i)}`);
    const term = words.join(' ').slice(0, 200);
    const probe = probePattern(term, [names]);
    expect(probe).toBeDefined();
    expect(likeMatches(probe!, `x ${term} y`)).toBe(true);
    expect(probe!.split('%').filter(Boolean).length).toBeLessThanOrEqual(3);
  });

  it('asks both columns of a two-column search for the same rare pieces', () => {
    const emails = sample(1_000_000, (i) => `user${(i * 7919) % 1_000_000}@example.com`);
    const probe = probePattern('user12345', [names, emails]);
    expect(probe).not.toMatch(/use|ser|exa|com/);
  });
});
