// Chooses what a search asks the trigram indexes for: the few rarest trigrams of the term, by the statistics
// PostgreSQL keeps of each searched column (pg_stats), so a term whose trigrams are mostly common stays cheap.
//
// Why: a trigram index answers `ILIKE '%user12345%'` by reading the posting list of every trigram of the term, and
// `use` and `ser` are in every one of a million "userN" names (~9 ms a column, however few rows match). The same
// index answers `ILIKE '%r12%345%'` (two rare trigrams, in order) from two short lists: 0.3 ms; the rows it finds are
// then checked against the whole term (page.ts). Written by hand: pg_trgm keeps no statistics per trigram, and no kept
// library chooses trigrams for it.
import type { SqlReader } from '@users-posts/db';

/** What pg_stats says of one column: the share of its rows that hold each trigram of its sampled values. */
export interface ColumnSample {
  /** The table's estimated row count (pg_class.reltuples). */
  rows: number;
  /** Each trigram (lower-cased) of the sampled values, with the share of rows whose value holds it. */
  trigramShares: Map<string, number>;
  /** The share of a trigram no sampled value holds: half the smallest share one sampled value stands for. */
  unseenShare: number;
}

/**
 * A column's sample from its sampled values (most common values and histogram bounds), each with the share of rows it
 * stands for. Built once per statistics read, so a request's choice costs a lookup per trigram of its term.
 */
export function columnSample(rows: number, values: readonly { text: string; share: number }[]): ColumnSample {
  // bound: per call (pg_stats' sampled values of one column)
  const trigramShares = new Map<string, number>();
  let smallest = 1;
  for (const { text, share } of values) {
    if (share <= 0) continue;
    smallest = Math.min(smallest, share);
    const lower = text.toLowerCase();
    const seen = new Set<string>();
    for (let at = 0; at + 3 <= lower.length; at++) seen.add(lower.slice(at, at + 3));
    for (const trigram of seen) trigramShares.set(trigram, (trigramShares.get(trigram) ?? 0) + share);
  }
  return { rows, trigramShares, unseenShare: smallest / 2 };
}

/**
 * A trigram sampled in at least this share of a column's rows is common: its posting list is long, and looking it up
 * costs more than it narrows. Not looked up when a rarer one is in the term.
 */
const COMMON_SHARE = 0.05;

/**
 * Candidates (rows the index finds, each rechecked against the whole term) a probe may leave. Measured on 10 M posts:
 * one more posting list of a trigram found in 1 row of 200 costs ~1 ms, as much as ~200 rechecks (~5 µs each); two
 * such trigrams leave ~160 candidates in 10 M titles. So a probe takes as few trigrams as bring the expected
 * candidates under this, at most MAX_TRIGRAMS.
 */
const ENOUGH_CANDIDATES = 1_000;
const MAX_TRIGRAMS = 3;

/** A term's word longer than this is looked up by its first characters only (bounds the choice's work). */
const MAX_WORD = 32;

/**
 * The choice weighs the rarest this many rare trigrams of the term, at most: sets of up to MAX_TRIGRAMS of them are
 * 298, whatever the term. A 200-character term of many words has ~180 rare trigrams, and their triples (~950 000)
 * would be CPU a client could ask for on every request.
 */
const RAREST_CONSIDERED = 12;

interface Trigram {
  word: number;
  at: number;
  /** Estimated share of rows holding it, per searched column. */
  shares: number[];
}

/** The estimated share of a column's rows that contain `trigram`. */
function shareOf(sample: ColumnSample, trigram: string): number {
  return sample.trigramShares.get(trigram) ?? sample.unseenShare;
}

/** Every set of up to MAX_TRIGRAMS trigrams no two of which share a character (so `%a%b%` still matches the term). */
function* disjointSets(trigrams: readonly Trigram[], from = 0, chosen: Trigram[] = []): Generator<Trigram[]> {
  for (let i = from; i < trigrams.length; i++) {
    const next = trigrams[i]!;
    const last = chosen.at(-1);
    if (last && last.word === next.word && next.at - last.at < 3) continue;
    const set = [...chosen, next];
    yield set;
    if (set.length < MAX_TRIGRAMS) yield* disjointSets(trigrams, i + 1, set);
  }
}

/**
 * The LIKE pattern (`%r12%345%`) the indexes should look up for `term`, or undefined to look up the whole term. Only
 * ASCII letters and digits are taken (always trigram characters to pg_trgm); `term` is a LIKE literal, and the
 * pattern holds none of its escapes. The pattern matches every row the term does: its pieces are pieces of the term,
 * in the term's order, none overlapping another.
 */
export function probePattern(term: string, samples: readonly ColumnSample[]): string | undefined {
  if (samples.length === 0 || samples.some((sample) => sample.trigramShares.size === 0)) return undefined;
  const words = term.match(/[A-Za-z0-9]{3,}/g) ?? [];
  const trigrams: Trigram[] = [];
  words.forEach((word, index) => {
    const lower = word.slice(0, MAX_WORD).toLowerCase();
    for (let at = 0; at + 3 <= lower.length; at++) {
      const shares = samples.map((sample) => shareOf(sample, lower.slice(at, at + 3)));
      if (Math.max(...shares) < COMMON_SHARE) trigrams.push({ word: index, at, shares });
    }
  });
  if (trigrams.length === 0) return undefined;
  // The rarest first (then in the term's order), the others dropped; set back in the term's order for disjointSets.
  const considered = [...trigrams]
    .sort((a, b) => Math.max(...a.shares) - Math.max(...b.shares) || position(a) - position(b))
    .slice(0, RAREST_CONSIDERED)
    .sort((a, b) => position(a) - position(b));
  const candidates = (set: readonly Trigram[]) =>
    samples.reduce((sum, sample, column) => sum + set.reduce((rows, trigram) => rows * trigram.shares[column]!, sample.rows), 0);
  // Lists within a factor of ~2 of each other count as equally long: a sample of ~100 values tells no finer.
  const listLength = (set: readonly Trigram[]) =>
    Math.round(Math.log(set.reduce((sum, trigram) => sum + Math.max(...trigram.shares), 0)) / Math.log(4));
  // Fewest trigrams that bring the candidates under ENOUGH_CANDIDATES (shortest lists, then farthest apart, first);
  // else the fewest candidates.
  const spread = (set: readonly Trigram[]) => position(set.at(-1)!) - position(set[0]!);
  let best: { set: Trigram[]; key: number[] } | undefined;
  for (const set of disjointSets(considered)) {
    const rows = candidates(set);
    const key = rows <= ENOUGH_CANDIDATES ? [0, set.length, listLength(set), -spread(set)] : [1, rows, set.length];
    if (!best || isBefore(key, best.key)) best = { set, key };
  }
  if (!best) return undefined;
  const pieces = best.set.map((trigram) => words[trigram.word]!.slice(trigram.at, trigram.at + 3));
  return `%${pieces.join('%')}%`;
}

function position(trigram: Trigram): number {
  return trigram.word * (MAX_WORD + 1) + trigram.at;
}

/** `key` sorts before `than` (compared element by element). */
function isBefore(key: readonly number[], than: readonly number[]): boolean {
  for (let i = 0; i < key.length; i++) if (key[i] !== than[i]) return key[i]! < than[i]!;
  return false;
}

/** How long a table's samples are trusted before they are read again (pg_stats changes only at ANALYZE). */
const SAMPLE_TTL_MS = 10 * 60_000;

interface Cached {
  at: number;
  samples: Promise<Map<string, ColumnSample>>;
}

/** Samples per reader (one per database) and table, read once in SAMPLE_TTL_MS; a stale entry is served while renewed. */
const cache = new WeakMap<SqlReader, Map<string, Cached>>();

async function readSamples(sql: SqlReader, table: string): Promise<Map<string, ColumnSample>> {
  // JSON text: the embedded database's bridge passes arrays and json as text, node-postgres parses them.
  const rows = await sql.rows<{ column: string; rows: number | string; stats: string }>(
    `SELECT s.attname AS "column", c.reltuples::float8 AS "rows",
            json_build_array(s.null_frac, s.most_common_vals::text::text[], s.most_common_freqs,
                             s.histogram_bounds::text::text[])::text AS stats
       FROM pg_stats s JOIN pg_class c ON c.oid = to_regclass(quote_ident(s.tablename))
      WHERE s.schemaname = current_schema() AND s.tablename = $1`,
    [table],
  );
  // bound: per call (the columns of one table)
  const samples = new Map<string, ColumnSample>();
  for (const row of rows) {
    const [nullShare, common, commonShares, histogram] = JSON.parse(row.stats) as [number, string[] | null, number[] | null, string[] | null];
    const values = (common ?? []).map((text, i) => ({ text, share: commonShares?.[i] ?? 0 }));
    const rest = Math.max(0, 1 - nullShare - values.reduce((sum, value) => sum + value.share, 0));
    for (const text of histogram ?? []) values.push({ text, share: rest / histogram!.length });
    samples.set(row.column, columnSample(Math.max(0, Number(row.rows)), values));
  }
  return samples;
}

/** The samples of `columns` of `table`, or [] when PostgreSQL has not analysed one of them yet. */
export async function columnSamples(sql: SqlReader, table: string, columns: readonly string[]): Promise<ColumnSample[]> {
  let tables = cache.get(sql);
  // bound: the searchable tables, a fixed set
  if (!tables) cache.set(sql, (tables = new Map()));
  let entry = tables.get(table);
  const now = Date.now();
  if (!entry || now - entry.at > SAMPLE_TTL_MS) {
    const renewed: Cached = { at: now, samples: readSamples(sql, table) };
    // A failed read is forgotten (the next search tries again); meanwhile searches look up whole terms.
    renewed.samples.catch(() => tables.get(table) === renewed && tables.delete(table));
    const stale = entry;
    tables.set(table, renewed);
    entry = stale ? { at: stale.at, samples: stale.samples } : renewed;
  }
  // bound: per call
  const samples = await entry.samples.catch(() => new Map<string, ColumnSample>());
  const chosen = columns.map((column) => samples.get(column));
  return chosen.every((sample): sample is ColumnSample => sample !== undefined && sample.rows > 0) ? chosen : [];
}
