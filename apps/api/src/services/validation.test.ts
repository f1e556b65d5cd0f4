// The field rules of SPEC §1 (name, email, password, age, texts), the storable-text check, and how failures are reported.
import { describe, expect, it } from '@jest/globals';
import { ErrorKinds } from '../errors/app-error.js';
import { characters, isStorableText } from '../text.js';
import { EMAIL_MAX, requireFields, rules, validate } from './validation.js';
import { refusal } from '../../test/support/refusal.js';

const UNSTORABLE = 'must not contain NUL characters or unpaired surrogates';

describe('isStorableText', () => {
  it('accepts any well-formed text, surrogate pairs included', () => {
    for (const text of ['', 'Ada Lovelace', 'Zoë Ω 日本', '🙂 emoji (a surrogate pair)', '\uD83D\uDE42']) expect(isStorableText(text)).toBe(true);
  });

  it.each([
    ['a NUL character (PostgreSQL text cannot hold it)', 'Ada\u0000Lovelace'],
    ['a lone high surrogate at the end', 'Ada\uD83D'],
    ['a lone high surrogate before a letter', '\uD83Dx'],
    ['a lone low surrogate', '\uDE42Ada'],
    ['a pair written the wrong way round', '\uDE42\uD83D'],
    ['two high surrogates before one low', '\uD83D\uD83D\uDE42'],
  ])('refuses %s', (_what, text) => {
    expect(isStorableText(text)).toBe(false);
  });
});

describe('rules', () => {
  it('name: 1 to 100 characters of storable text, not blank', () => {
    expect(rules.name('A')).toBeUndefined();
    expect(rules.name('a'.repeat(100))).toBeUndefined();
    expect(rules.name('a'.repeat(101))).toBe('must be at most 100 characters');
    expect(rules.name('')).toBe('must not be empty');
    expect(rules.name(' \t\n ')).toBe('must not be empty');
    expect(rules.name(42)).toBe('must be a string');
    expect(rules.name(null)).toBe('must be a string');
    expect(rules.name('Ada\u0000')).toBe(UNSTORABLE);
  });

  it.each([
    ['title', rules.title, 200],
    ['content', rules.content, 50_000],
    ['body', rules.body, 5_000],
  ] as const)('%s: 1 to %i characters', (_name, rule, max) => {
    expect(rule('a'.repeat(max))).toBeUndefined();
    expect(rule('a'.repeat(max + 1))).toBe(`must be at most ${max} characters`);
    expect(rule('   ')).toBe('must not be empty');
    expect(rule('\uD800')).toBe(UNSTORABLE);
  });

  it('email: an address of at most 254 characters; its case is kept (the service lower-cases what it stores)', () => {
    expect(EMAIL_MAX).toBe(254);
    expect(rules.email('ada@example.com')).toBeUndefined();
    expect(rules.email('Ada.Lovelace@Example.COM')).toBeUndefined();
    const longest = `${'a'.repeat(EMAIL_MAX - '@example.com'.length)}@example.com`;
    expect(longest).toHaveLength(254);
    expect(rules.email(longest)).toBeUndefined();
    expect(rules.email(`a${longest}`)).toBe('must be at most 254 characters');
  });

  it.each(['', 'ada', 'ada@', '@example.com', 'ada@example', 'ada lovelace@example.com', 'ada@@example.com', 'ada@exa mple.com'])(
    'email: refuses %p as not an e-mail address',
    (value) => {
      expect(rules.email(value)).toBe('must be an e-mail address');
    },
  );

  it('email: refuses what is not a string, and unstorable text', () => {
    expect(rules.email(['ada@example.com'])).toBe('must be a string');
    expect(rules.email('ada\u0000@example.com')).toBe(UNSTORABLE);
  });

  it('password: 8 to 128 characters of storable text', () => {
    expect(rules.password('a'.repeat(7))).toBe('must be 8 to 128 characters');
    expect(rules.password('a'.repeat(8))).toBeUndefined();
    expect(rules.password('a'.repeat(128))).toBeUndefined();
    expect(rules.password('a'.repeat(129))).toBe('must be 8 to 128 characters');
    expect(rules.password(12345678)).toBe('must be a string');
    expect(rules.password('correct\u0000horse')).toBe(UNSTORABLE);
  });

  it('age: an integer from 0 to 150, or null (no age)', () => {
    for (const age of [0, 36, 150, null]) expect(rules.age(age)).toBeUndefined();
    for (const age of [-1, 151, 30.5, '30', NaN, Infinity, true]) expect(rules.age(age)).toBe('must be an integer from 0 to 150');
  });
});

describe('lengths in characters, as the contract counts them (REST and GraphQL agree)', () => {
  it('counts a surrogate pair as one character, and a lone surrogate as one', () => {
    expect(characters('🙂🙂')).toBe(2);
    expect(characters('a🙂b')).toBe(3);
    expect(characters('\uD83D')).toBe(1);
    expect(characters('\uDE42\uD83D')).toBe(2);
  });

  it('accepts a 100-emoji name and refuses a 101-emoji one, as Ajv does on the REST door', () => {
    expect(rules.name('🙂'.repeat(100))).toBeUndefined();
    expect(rules.name('🙂'.repeat(101))).toBe('must be at most 100 characters');
  });

  it('refuses a 4-emoji password (4 characters, 8 UTF-16 units) and accepts an 8-emoji one', () => {
    expect(rules.password('🙂'.repeat(4))).toBe('must be 8 to 128 characters');
    expect(rules.password('🙂'.repeat(8))).toBeUndefined();
    expect(rules.password('🙂'.repeat(129))).toBe('must be 8 to 128 characters');
  });
});

describe('validate', () => {
  it('passes quietly when every present field holds', () => {
    expect(validate({ name: 'Ada', email: 'ada@example.com', age: null }, { name: true, email: true, age: true })).toBeUndefined();
  });

  it('throws one 422 naming every failing field, in the order checked, with the prefix', () => {
    const error = refusal(() =>
      validate({ name: '', email: 'nope', age: 200, password: 'short' }, { name: true, email: true, age: true, password: true }, 'input.'),
    );
    expect(error.kind).toBe(ErrorKinds.VALIDATION_FAILED);
    expect(error.status).toBe(422);
    expect(error.message).toBe('Validation failed');
    expect(error.fields).toEqual([
      { field: 'input.name', message: 'must not be empty' },
      { field: 'input.email', message: 'must be an e-mail address' },
      { field: 'input.age', message: 'must be an integer from 0 to 150' },
      { field: 'input.password', message: 'must be 8 to 128 characters' },
    ]);
  });

  it('skips absent fields and fields it was not asked to check', () => {
    expect(validate({ email: 'nope', age: 200 }, { name: true })).toBeUndefined();
    expect(refusal(() => validate({ email: 'nope', age: 200 }, { email: true })).fields).toEqual([
      { field: 'email', message: 'must be an e-mail address' },
    ]);
  });

  it('treats a null text as a wrong type, not as absent', () => {
    expect(refusal(() => validate({ name: null }, { name: true })).fields).toEqual([{ field: 'name', message: 'must be a string' }]);
  });
});

describe('requireFields', () => {
  it('names every missing or null field, in the order asked, with the prefix', () => {
    const error = refusal(() => requireFields({ name: 'Ada', email: null, age: 0 }, ['name', 'email', 'password'], 'data.'));
    expect(error.kind).toBe(ErrorKinds.VALIDATION_FAILED);
    expect(error.fields).toEqual([
      { field: 'data.email', message: 'is required' },
      { field: 'data.password', message: 'is required' },
    ]);
  });

  it('accepts falsy values that are present (0, empty string, false)', () => {
    expect(requireFields({ age: 0, name: '', admin: false }, ['age', 'name', 'admin'])).toBeUndefined();
  });
});
