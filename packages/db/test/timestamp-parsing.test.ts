// The pool's reader of `timestamp without time zone` (database.ts parseUtcTimestamp): its digit-by-digit path reads
// every text PostgreSQL writes exactly as the ISO parse it replaced, and leaves every other shape to that parse.
import { expect, test } from '@jest/globals';
import { parseUtcTimestamp } from '../src/database.js';

const asIso = (text: string) => new Date(`${text.replace(' ', 'T')}Z`);

test('every fraction length, day and hour, read as the ISO parse reads them', () => {
  const texts = [
    '2026-11-28 21:18:00',
    '2026-11-28 21:18:00.1',
    '2026-11-28 21:18:00.12',
    '2026-11-28 21:18:00.123',
    '2026-11-28 21:18:00.1234',
    '2026-11-28 21:18:00.12345',
    '2026-11-28 21:18:00.123456',
    '2026-11-28 21:18:00.999999',
    '1970-01-01 00:00:00',
    '2000-02-29 23:59:59.5',
    '9999-12-31 23:59:59.999999',
    '0100-01-01 00:00:00',
  ];
  for (const text of texts) expect({ text, time: parseUtcTimestamp(text).getTime() }).toEqual({ text, time: asIso(text).getTime() });
});

test('shapes the digit path does not read go the ISO way: two-digit years, BC, five-digit years, infinity', () => {
  // Date.UTC would read year 0050 as 1950: the digit path must not take it.
  expect(parseUtcTimestamp('0050-06-15 12:00:00').toISOString()).toBe('0050-06-15T12:00:00.000Z');
  for (const text of ['0001-01-01 00:00:00 BC', '12345-01-01 00:00:00', 'infinity', '-infinity'])
    expect({ text, time: parseUtcTimestamp(text).getTime() }).toEqual({ text, time: asIso(text).getTime() });
});
