// Keyset cursors: what one listing issues reads back there, and nowhere else; a tampered, forged or malformed one is a 400.
import { describe, expect, it } from '@jest/globals';
import { ErrorKinds } from '../errors/app-error.js';
import { decodeCursor, encodeCursor, type CursorKind, type CursorScope } from './cursor.js';
import { refusal } from '../../test/support/refusal.js';

const USERS_BY_NAME: CursorScope = { collection: 'users', field: 'name', direction: 'asc', filters: { equal: { role: 'USER' }, search: null } };
const USERS_BY_AGE: CursorScope = { ...USERS_BY_NAME, field: 'age' };
const POSTS_BY_DATE: CursorScope = { collection: 'posts', field: 'createdAt', direction: 'desc', filters: { equal: {}, search: null } };
const ORDERS_BY_STATUS: CursorScope = { collection: 'orders', field: 'status', direction: 'asc', filters: null };
const STATUSES = ['pending', 'paid', 'shipped', 'cancelled'] as const;

/** The JSON inside a cursor, and a cursor made of any JSON: what a client holding one can read and write. */
const payloadOf = (cursor: string): Record<string, unknown> => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
const forge = (payload: unknown): string => Buffer.from(JSON.stringify(payload)).toString('base64url');
const tamper = (cursor: string, changes: Record<string, unknown>): string => forge({ ...payloadOf(cursor), ...changes });

/** The 400 a refused cursor is, naming `parameter`. */
const refused = (message: string, parameter = 'cursor') => ({
  kind: ErrorKinds.BAD_QUERY_PARAMETER,
  message: `Invalid ${parameter}: ${message}`,
  fields: [{ field: parameter, message }],
});

describe('a cursor round trip', () => {
  it('reads back the sort value and id it was issued with, from an opaque base64url token', () => {
    const cursor = encodeCursor(USERS_BY_NAME, 'Ada Lovelace', 42);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(cursor).not.toContain('Ada');
    expect(decodeCursor(cursor, USERS_BY_NAME)).toEqual({ value: 'Ada Lovelace', id: 42 });
  });

  it('issues a date as its ISO-8601 instant, which reads back as that string', () => {
    const cursor = encodeCursor(POSTS_BY_DATE, new Date('2024-02-29T12:34:56.789Z'), 7);
    expect(decodeCursor(cursor, POSTS_BY_DATE, { kind: 'date' })).toEqual({ value: '2024-02-29T12:34:56.789Z', id: 7 });
  });

  it('reads back integers at both ends of PostgreSQL `integer`, an enum member, and the null of a nullable field', () => {
    expect(decodeCursor(encodeCursor(USERS_BY_AGE, 2_147_483_647, 1), USERS_BY_AGE, { kind: 'integer' })).toEqual({ value: 2_147_483_647, id: 1 });
    expect(decodeCursor(encodeCursor(USERS_BY_AGE, -2_147_483_647, 1), USERS_BY_AGE, { kind: 'integer' })).toEqual({ value: -2_147_483_647, id: 1 });
    expect(decodeCursor(encodeCursor(ORDERS_BY_STATUS, 'shipped', 9), ORDERS_BY_STATUS, { kind: STATUSES })).toEqual({ value: 'shipped', id: 9 });
    expect(decodeCursor(encodeCursor(USERS_BY_AGE, null, 3), USERS_BY_AGE, { kind: 'integer', nullable: true })).toEqual({ value: null, id: 3 });
  });

  it('reads the id sort by its id (the default kind of the `id` field)', () => {
    const byId: CursorScope = { collection: 'posts', field: 'id', direction: 'asc', filters: undefined };
    expect(decodeCursor(encodeCursor(byId, 5, 5), byId)).toEqual({ value: 5, id: 5 });
  });

  it('accepts the smallest and largest ids', () => {
    expect(decodeCursor(encodeCursor(USERS_BY_NAME, 'a', 0), USERS_BY_NAME).id).toBe(0);
    expect(decodeCursor(encodeCursor(USERS_BY_NAME, 'a', 2_147_483_647), USERS_BY_NAME).id).toBe(2_147_483_647);
  });

  it('treats absent and null filters as the same listing', () => {
    const cursor = encodeCursor({ ...ORDERS_BY_STATUS, filters: undefined }, 'paid', 4);
    expect(decodeCursor(cursor, { ...ORDERS_BY_STATUS, filters: null }, { kind: STATUSES })).toEqual({ value: 'paid', id: 4 });
  });
});

describe('a cursor is bound to the listing that issued it', () => {
  it('attack: a cursor replayed on another collection is refused', () => {
    const cursor = encodeCursor(USERS_BY_NAME, 'Ada', 42);
    expect(refusal(() => decodeCursor(cursor, { ...USERS_BY_NAME, collection: 'posts' }))).toMatchObject(
      refused('it was issued for another collection, filter or search'),
    );
  });

  it('attack: a cursor issued under role=USER is refused under role=ADMIN, and under another search', () => {
    const cursor = encodeCursor(USERS_BY_NAME, 'Ada', 42);
    const otherFilter = { ...USERS_BY_NAME, filters: { equal: { role: 'ADMIN' }, search: null } };
    const otherSearch = { ...USERS_BY_NAME, filters: { equal: { role: 'USER' }, search: 'ada' } };
    const unfiltered = { ...USERS_BY_NAME, filters: undefined };
    for (const scope of [otherFilter, otherSearch, unfiltered]) {
      expect(refusal(() => decodeCursor(cursor, scope))).toMatchObject(refused('it was issued for another collection, filter or search'));
    }
  });

  it('refuses a cursor under another sort field or direction', () => {
    const cursor = encodeCursor(USERS_BY_NAME, 'Ada', 42);
    expect(refusal(() => decodeCursor(cursor, { ...USERS_BY_NAME, field: 'email' }))).toMatchObject(refused('it was issued for another sort order'));
    expect(refusal(() => decodeCursor(cursor, { ...USERS_BY_NAME, direction: 'desc' }))).toMatchObject(
      refused('it was issued for another sort order'),
    );
  });

  it('attack: rewriting the sort field and direction inside the cursor does not move it to another listing', () => {
    const cursor = tamper(encodeCursor(USERS_BY_NAME, 'Ada', 42), { f: 'email', d: 'desc' });
    expect(refusal(() => decodeCursor(cursor, { ...USERS_BY_NAME, field: 'email', direction: 'desc' }))).toMatchObject(
      refused('it was issued for another collection, filter or search'),
    );
  });

  it('names the parameter it was given (`after` in GraphQL)', () => {
    const cursor = encodeCursor(USERS_BY_NAME, 'Ada', 42);
    expect(refusal(() => decodeCursor(cursor, POSTS_BY_DATE, { parameter: 'after' }))).toMatchObject(
      refused('it was issued for another sort order', 'after'),
    );
  });
});

describe('malformed cursors', () => {
  it.each([
    ['the empty string', ''],
    ['text that is not base64 JSON', 'not-a-cursor'],
    ['JSON null', forge(null)],
    ['a JSON array', forge(['name', 'asc', 'Ada', 42])],
    ['a JSON number', forge(42)],
    ['a JSON string', forge('Ada')],
    ['an empty object', forge({})],
  ])('refuses %s as malformed', (_what, cursor) => {
    expect(refusal(() => decodeCursor(cursor, USERS_BY_NAME))).toMatchObject(refused('malformed'));
  });

  it.each<[string, Record<string, unknown>]>([
    ['a negative id', { id: -1 }],
    ['an id beyond PostgreSQL integer', { id: 2_147_483_648 }],
    ['a fractional id', { id: 1.5 }],
    ['an id as a string', { id: '42' }],
    ['no id', { id: undefined }],
    ['an upper-case direction', { d: 'ASC' }],
    ['a sort field that is not a string', { f: ['name'] }],
    ['a fingerprint that is not a string', { s: 0 }],
  ])('attack: a cursor tampered to carry %s is refused as malformed', (_what, changes) => {
    const cursor = tamper(encodeCursor(USERS_BY_NAME, 'Ada', 42), changes);
    expect(refusal(() => decodeCursor(cursor, USERS_BY_NAME))).toMatchObject(refused('malformed'));
  });
});

describe('forged values: the listing matches, the value must still fit its column', () => {
  /** A cursor of `scope` whose value was rewritten (its fingerprint stays valid: it is a hash anyone can compute). */
  const forgedValue = (scope: CursorScope, value: unknown): string => tamper(encodeCursor(scope, null, 1), { v: value });

  it.each<[string, CursorScope, CursorKind, unknown]>([
    ['SQL text where an integer goes', USERS_BY_AGE, 'integer', '1 OR 1=1'],
    ['an integer beyond PostgreSQL integer', USERS_BY_AGE, 'integer', 2_147_483_648],
    ['an integer below PostgreSQL integer', USERS_BY_AGE, 'integer', -2_147_483_648],
    ['a fraction where an integer goes', USERS_BY_AGE, 'integer', 30.5],
    ['a number where text goes', USERS_BY_NAME, 'string', 42],
    ['an object where text goes', USERS_BY_NAME, 'string', { $gt: '' }],
    ['an array where text goes', USERS_BY_NAME, 'string', ['Ada']],
    ['a boolean where text goes', USERS_BY_NAME, 'string', true],
    ['a status outside the enum', ORDERS_BY_STATUS, STATUSES, 'refunded'],
    ['an enum member in another case', ORDERS_BY_STATUS, STATUSES, 'PAID'],
    ['a NUL character', USERS_BY_NAME, 'string', 'Ada\u0000'],
    ['an unpaired surrogate', USERS_BY_NAME, 'string', 'Ada\uD800'],
    ['text longer than any sortable column (1001 characters)', USERS_BY_NAME, 'string', 'a'.repeat(1001)],
  ])('attack: a cursor forged with %s is refused', (_what, scope, kind, value) => {
    expect(refusal(() => decodeCursor(forgedValue(scope, value), scope, { kind }))).toMatchObject(refused(`its value is not a valid ${scope.field}`));
  });

  it('accepts text up to 1000 characters', () => {
    const value = 'a'.repeat(1000);
    expect(decodeCursor(forgedValue(USERS_BY_NAME, value), USERS_BY_NAME)).toEqual({ value, id: 1 });
  });

  it('refuses a null on a field that is not nullable, and a missing value where text goes', () => {
    expect(refusal(() => decodeCursor(encodeCursor(USERS_BY_NAME, null, 1), USERS_BY_NAME))).toMatchObject(refused('its value is not a valid name'));
    const missing = tamper(encodeCursor(USERS_BY_NAME, 'Ada', 1), { v: undefined });
    expect(refusal(() => decodeCursor(missing, USERS_BY_NAME))).toMatchObject(refused('its value is not a valid name'));
  });

  it.each([
    ['29 February of a common year', '2023-02-29T00:00:00Z'],
    ['31 April', '2024-04-31T00:00:00Z'],
    ['a thirteenth month', '2024-13-01T00:00:00Z'],
    ['hour 24', '2024-01-01T24:00:00Z'],
    ['a leap second', '2024-12-31T23:59:60Z'],
    ['minute 60', '2024-01-01T12:60:00Z'],
    ['year 0000', '0000-01-01T00:00:00Z'],
    ['an expanded year beyond 9999', '+010000-01-01T00:00:00.000Z'],
    ['a negative expanded year', '-100000-01-01T00:00:00.000Z'],
    ['an offset other than Z', '2024-01-01T00:00:00+02:00'],
    ['a date without a time', '2024-01-01'],
    ['seven fractional digits', '2024-01-01T00:00:00.1234567Z'],
    ['English', 'yesterday'],
  ])('refuses an impossible or foreign date: %s', (_what, value) => {
    expect(refusal(() => decodeCursor(forgedValue(POSTS_BY_DATE, value), POSTS_BY_DATE, { kind: 'date' }))).toMatchObject(
      refused('its value is not a valid createdAt'),
    );
  });

  it('refuses a date given as epoch milliseconds', () => {
    expect(refusal(() => decodeCursor(forgedValue(POSTS_BY_DATE, 1_704_067_200_000), POSTS_BY_DATE, { kind: 'date' }))).toMatchObject(
      refused('its value is not a valid createdAt'),
    );
  });

  it.each(['2024-02-29T00:00:00Z', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999999Z', '2024-06-30T23:59:59.5Z'])(
    'accepts the real instant %s',
    (value) => {
      expect(decodeCursor(forgedValue(POSTS_BY_DATE, value), POSTS_BY_DATE, { kind: 'date' })).toEqual({ value, id: 1 });
    },
  );
});
