// The collection conventions of SPEC §4: which paging mode, sort, fields and search each query string asks for, and the 400s.
import { beyondOffsetWindow, DEFAULT_COLLECTION_LIMITS } from '../config/collection-limits.js';
import { describe, expect, it } from '@jest/globals';
import { ErrorKinds } from '../errors/app-error.js';
import {
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  likeLiteral,
  parseCollectionQuery,
  selectFields,
  type CollectionParams,
  type CollectionRules,
} from './query.js';
import { refusal } from '../../test/support/refusal.js';

type UserSortField = 'id' | 'name' | 'email' | 'age' | 'createdAt';

/** The users collection's allow-lists (SPEC §4). */
const USERS: CollectionRules<UserSortField> = {
  sortable: ['id', 'name', 'email', 'age', 'createdAt'],
  selectable: ['id', 'name', 'email', 'age', 'role', 'createdAt', 'updatedAt'],
};

const parse = (params: CollectionParams) => parseCollectionQuery(params, USERS);

/** The 400 naming `parameter`. */
const refused = (parameter: string, message: string) => ({
  kind: ErrorKinds.BAD_QUERY_PARAMETER,
  message: `Invalid ${parameter}: ${message}`,
  fields: [{ field: parameter, message }],
});

describe('paging', () => {
  it('pages by default: page 1 of 20, at most 100', () => {
    expect(DEFAULT_PAGE_SIZE).toBe(20);
    expect(MAX_PAGE_SIZE).toBe(100);
    expect(parse({}).paging).toEqual({ mode: 'page', page: 1, pageSize: 20 });
  });

  it('takes page and pageSize, with `size` as pageSize’s alias (pageSize wins when both come)', () => {
    expect(parse({ page: 3, pageSize: 50 }).paging).toEqual({ mode: 'page', page: 3, pageSize: 50 });
    expect(parse({ page: 2, size: 10 }).paging).toEqual({ mode: 'page', page: 2, pageSize: 10 });
    expect(parse({ pageSize: 5, size: 10 }).paging).toEqual({ mode: 'page', page: 1, pageSize: 5 });
  });

  it('switches to offset paging on `offset` or `limit`, each defaulting', () => {
    expect(parse({ offset: 40, limit: 10 }).paging).toEqual({ mode: 'offset', offset: 40, limit: 10 });
    expect(parse({ offset: 40 }).paging).toEqual({ mode: 'offset', offset: 40, limit: 20 });
    expect(parse({ limit: 10 }).paging).toEqual({ mode: 'offset', offset: 0, limit: 10 });
    expect(parse({ offset: 40, page: 3 }).paging).toEqual({ mode: 'offset', offset: 40, limit: 20 });
  });

  it('switches to cursor paging on `cursor`, over every other mode; an empty cursor starts from the beginning', () => {
    expect(parse({ cursor: 'abc', limit: 5, page: 2, offset: 10 }).paging).toEqual({ mode: 'cursor', cursor: 'abc', limit: 5 });
    expect(parse({ cursor: '' }).paging).toEqual({ mode: 'cursor', cursor: undefined, limit: 20 });
  });

  it.each([
    ['page', { page: Infinity }],
    ['page', { page: NaN }],
    ['offset', { offset: Infinity }],
    ['offset', { offset: -Infinity, limit: 10 }],
    ['page', { page: Infinity, cursor: 'abc' }],
  ])('refuses a %s that is not finite (1e400 arrives as Infinity)', (parameter, params) => {
    expect(refusal(() => parse(params))).toMatchObject(refused(parameter, 'must be a finite integer'));
  });

  it('refuses a page or offset that skips more than the offset window, naming it (SPEC §4 "At scale")', () => {
    const beyond = (parameter: string) => refused(parameter, beyondOffsetWindow(DEFAULT_COLLECTION_LIMITS));
    expect(() => parse({ page: 1e20 })).toThrow(expect.objectContaining(beyond('page')));
    expect(parse({ page: 501 }).paging).toEqual({ mode: 'page', page: 501, pageSize: 20 }); // skips exactly 10 000
    expect(() => parse({ page: 502 })).toThrow(expect.objectContaining(beyond('page')));
    expect(parse({ offset: 10_000 }).paging).toEqual({ mode: 'offset', offset: 10_000, limit: 20 });
    expect(() => parse({ offset: 10_001 })).toThrow(expect.objectContaining(beyond('offset')));
    expect(parse({ cursor: '', limit: 100 }).paging.mode).toBe('cursor'); // cursors have no depth limit
  });

  it('takes a lower MAX_OFFSET from the configuration', () => {
    const lowered = { exactCountLimit: 10, maxOffset: 100 };
    expect(() => parseCollectionQuery({ offset: 101 }, USERS, lowered)).toThrow(
      expect.objectContaining(refused('offset', beyondOffsetWindow(lowered))),
    );
  });
});

describe('sorting', () => {
  it('sorts by id ascending by default, also when only `order` comes', () => {
    expect(parse({}).sort).toEqual({ field: 'id', direction: 'asc' });
    expect(parse({ order: 'desc' }).sort).toEqual({ field: 'id', direction: 'desc' });
  });

  it.each<[string, CollectionParams, UserSortField, 'asc' | 'desc']>([
    ['sort alone', { sort: 'name' }, 'name', 'asc'],
    ['sort + order', { sort: 'age', order: 'desc' }, 'age', 'desc'],
    ['sort=field,desc', { sort: 'createdAt,desc' }, 'createdAt', 'desc'],
    ['sort=field,asc over order', { sort: 'email,asc', order: 'desc' }, 'email', 'asc'],
    ['a direction in any case, spaced', { sort: ' name , DESC ' }, 'name', 'desc'],
    ['sort=-field', { sort: '-age' }, 'age', 'desc'],
    ['sortBy=field', { sortBy: 'name' }, 'name', 'asc'],
    ['sortBy=-field', { sortBy: '-createdAt' }, 'createdAt', 'desc'],
    ['sortBy over sort', { sortBy: '-email', sort: 'name,asc' }, 'email', 'desc'],
    ['sortBy, whose direction is its sign only (`order` is for `sort`)', { sortBy: 'name', order: 'desc' }, 'name', 'asc'],
  ])('reads %s', (_syntax, params, field, direction) => {
    expect(parse(params).sort).toEqual({ field, direction });
  });

  it('refuses a field outside the allow-list, naming the parameter it came in and the allowed fields', () => {
    const allowed = 'allowed: id, name, email, age, createdAt';
    expect(refusal(() => parse({ sort: 'role' }))).toMatchObject(refused('sort', `cannot sort by \`role\`; ${allowed}`));
    expect(refusal(() => parse({ sortBy: '-role' }))).toMatchObject(refused('sortBy', `cannot sort by \`role\`; ${allowed}`));
    expect(refusal(() => parse({ sort: '' }))).toMatchObject(refused('sort', `cannot sort by \`\`; ${allowed}`));
  });

  it.each(['passwordHash', 'tokenVersion', '__proto__', 'constructor', 'name; DROP TABLE users', 'NAME'])(
    'attack: sorting by `%s` (not allow-listed) is refused',
    (field) => {
      expect(refusal(() => parse({ sort: field })).fields?.[0]?.field).toBe('sort');
    },
  );

  it('refuses a direction other than asc or desc, and a third comma-separated part', () => {
    expect(refusal(() => parse({ sort: 'name,sideways' }))).toMatchObject(refused('sort', 'direction must be asc or desc'));
    expect(refusal(() => parse({ sort: 'name,' }))).toMatchObject(refused('sort', 'direction must be asc or desc'));
    expect(refusal(() => parse({ sort: 'name', order: 'DESC' } as unknown as CollectionParams))).toMatchObject(
      refused('sort', 'direction must be asc or desc'),
    );
    expect(refusal(() => parse({ sort: 'name,desc,id' }))).toMatchObject(refused('sort', 'expected `field` or `field,asc|desc`'));
  });
});

describe('field selection', () => {
  it('keeps every field when `fields` is absent', () => {
    expect(parse({}).fields).toBeUndefined();
  });

  it('always includes id, once, first; trims names and drops empty ones', () => {
    expect(parse({ fields: 'name,email' }).fields).toEqual(['id', 'name', 'email']);
    expect(parse({ fields: ' email , ,name,id,email' }).fields).toEqual(['id', 'email', 'name']);
    expect(parse({ fields: '' }).fields).toEqual(['id']);
  });

  it('attack: selecting a secret column is refused, naming every unknown field and the allowed ones', () => {
    expect(refusal(() => parse({ fields: 'name,passwordHash,tokenVersion' }))).toMatchObject(
      refused('fields', 'unknown field(s) passwordHash, tokenVersion; allowed: id, name, email, age, role, createdAt, updatedAt'),
    );
  });

  it('selectFields keeps id and the selected keys, and returns the item itself when nothing was selected', () => {
    const user = { id: 7, name: 'Ada', email: 'ada@example.com', age: 36 };
    expect(selectFields(user, ['id', 'email'])).toEqual({ id: 7, email: 'ada@example.com' });
    expect(selectFields(user, ['age', 'nonexistent'])).toEqual({ id: 7, age: 36 });
    expect(selectFields(user, undefined)).toBe(user);
  });
});

describe('search', () => {
  it('takes `q`, or `search` as its alias (q wins), trimmed; blank means no search', () => {
    expect(parse({ q: '  ada  ' }).search).toBe('ada');
    expect(parse({ search: 'lovelace' }).search).toBe('lovelace');
    expect(parse({ q: 'ada', search: 'lovelace' }).search).toBe('ada');
    expect(parse({ q: '   ' }).search).toBeUndefined();
    expect(parse({}).search).toBeUndefined();
  });

  it('attack: LIKE wildcards in a search match themselves (`q=%` once matched everything, `q=100%` matched "1000")', () => {
    expect(parse({ q: '%' }).search).toBe('\\%');
    expect(parse({ q: '100%' }).search).toBe('100\\%');
    expect(parse({ q: 'a_b' }).search).toBe('a\\_b');
    expect(parse({ q: 'C:\\path' }).search).toBe('C:\\\\path');
  });

  it('likeLiteral escapes `\\`, `%` and `_` (each once) and nothing else', () => {
    expect(likeLiteral('\\%_')).toBe('\\\\\\%\\_');
    expect(likeLiteral("plain 'text' * ? [x]")).toBe("plain 'text' * ? [x]");
  });

  it('refuses text PostgreSQL cannot compare, naming the parameter it came in', () => {
    const message = 'must not contain NUL characters or unpaired surrogates';
    expect(refusal(() => parse({ q: 'ada\u0000' }))).toMatchObject(refused('q', message));
    expect(refusal(() => parse({ search: '\uDC00ada' }))).toMatchObject(refused('search', message));
  });
});
