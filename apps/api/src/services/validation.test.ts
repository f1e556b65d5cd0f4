// The field rules of SPEC §1 as the contract declares them (openapi.yaml's input schemas, compiled for the domain), the
// storable-text check, and how failures are reported.
import { describe, expect, it } from '@jest/globals';
import { ErrorKinds } from '../errors/app-error.js';
import { isStorableText } from '../contract/text.js';
import { nullableFields, validateInput, type InputSchema } from './validation.js';
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

/** The fields a refused input is named by, with their messages; undefined when the input holds. */
function verdict(schema: InputSchema, input: unknown) {
  try {
    validateInput(schema, input);
    return undefined;
  } catch (error) {
    return refusal(() => {
      throw error;
    }).fields;
  }
}

const user = (fields: Record<string, unknown>) => ({ name: 'Ada', email: 'ada@example.com', ...fields });

describe("validateInput: the contract's field rules", () => {
  it('name: 1 to 100 characters of storable text, not only white space', () => {
    expect(verdict('CreateUserInput', user({ name: 'A' }))).toBeUndefined();
    expect(verdict('CreateUserInput', user({ name: 'a'.repeat(100) }))).toBeUndefined();
    expect(verdict('CreateUserInput', user({ name: 'a'.repeat(101) }))).toEqual([
      { field: 'name', message: 'must NOT have more than 100 characters' },
    ]);
    expect(verdict('CreateUserInput', user({ name: '' }))?.[0]?.field).toBe('name');
    expect(verdict('CreateUserInput', user({ name: ' \t\n ' }))).toEqual([{ field: 'name', message: 'must match pattern "\\S"' }]);
    expect(verdict('CreateUserInput', user({ name: 42 }))).toEqual([{ field: 'name', message: 'must be string' }]);
    expect(verdict('CreateUserInput', user({ name: 'Ada\u0000' }))).toEqual([{ field: 'name', message: UNSTORABLE }]);
  });

  it.each([
    ['title', 'CreatePostInput', { content: 'C' }, 200],
    ['content', 'CreatePostInput', { title: 'T' }, 50_000],
    ['body', 'CreateCommentInput', {}, 5_000],
    ['product', 'CreateOrderInput', { quantity: 1, totalCents: 0 }, 200],
  ] as const)('%s: 1 to %i characters, not only white space', (field, schema, rest, max) => {
    expect(verdict(schema, { ...rest, [field]: 'a'.repeat(max) })).toBeUndefined();
    expect(verdict(schema, { ...rest, [field]: 'a'.repeat(max + 1) })).toEqual([{ field, message: `must NOT have more than ${max} characters` }]);
    expect(verdict(schema, { ...rest, [field]: '   ' })?.[0]?.field).toBe(field);
    expect(verdict(schema, { ...rest, [field]: '\uD800' })).toEqual([{ field, message: UNSTORABLE }]);
  });

  it('email: an address of at most 254 characters; its case is kept (the service lower-cases what it stores)', () => {
    expect(verdict('CreateUserInput', user({ email: 'Ada.Lovelace@Example.COM' }))).toBeUndefined();
    const longest = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`;
    expect(longest).toHaveLength(254);
    expect(verdict('CreateUserInput', user({ email: longest }))).toBeUndefined();
    expect(verdict('CreateUserInput', user({ email: `a${longest}` }))).toEqual([
      { field: 'email', message: 'must NOT have more than 254 characters' },
    ]);
  });

  it.each([
    ['not an address', 'ada'],
    ['no domain', 'ada@'],
    ['no local part', '@example.com'],
    ['a space', 'ada lovelace@example.com'],
    ['two @', 'ada@@example.com'],
    ["a Cyrillic look-alike of the admin's address (U+0430)", '\u0430dmin@example.com'],
    ['a zero-width space inside (U+200B)', 'ad\u200Bmin@example.com'],
    ['a dotless ı (U+0131)', 'adm\u0131n@example.com'],
    ['fullwidth letters', '\uFF41\uFF44\uFF4D\uFF49\uFF4E@example.com'],
    ['a right-to-left override', 'admin\u202E@example.com'],
    ['a non-ASCII domain (punycode is the accepted form)', 'ada@exämple.com'],
  ])('email: refuses %s', (_what, email) => {
    expect(verdict('CreateUserInput', user({ email }))).toEqual([{ field: 'email', message: 'must match format "email"' }]);
  });

  it('email: accepts an internationalised domain in its punycode form', () => {
    expect(verdict('CreateUserInput', user({ email: 'ada@xn--exmple-cua.com' }))).toBeUndefined();
  });

  it('password: 8 to 128 characters, counted as characters (an emoji is one)', () => {
    expect(verdict('CreateUserInput', user({ password: 'a'.repeat(8) }))).toBeUndefined();
    expect(verdict('CreateUserInput', user({ password: 'a'.repeat(128) }))).toBeUndefined();
    expect(verdict('CreateUserInput', user({ password: 'a'.repeat(7) }))).toEqual([
      { field: 'password', message: 'must NOT have fewer than 8 characters' },
    ]);
    expect(verdict('CreateUserInput', user({ password: '🙂'.repeat(4) }))?.[0]?.field).toBe('password');
    expect(verdict('CreateUserInput', user({ password: '🙂'.repeat(8) }))).toBeUndefined();
  });

  it('age: an integer from 0 to 150, or null (no age)', () => {
    for (const age of [0, 36, 150, null]) expect(verdict('CreateUserInput', user({ age }))).toBeUndefined();
    for (const age of [-1, 151, 30.5, '30', true]) expect(verdict('CreateUserInput', user({ age }))?.[0]?.field).toBe('age');
  });

  it('names every failing field at once, nested ones by their path, and refuses unknown fields', () => {
    const error = refusal(() => validateInput('BatchCreateUsersInput', { users: [user({}), { name: '', email: 'nope', role: 'ADMIN' }] }));
    expect(error.kind).toBe(ErrorKinds.VALIDATION_FAILED);
    expect(error.status).toBe(422);
    expect(error.fields?.map((failure) => failure.field).sort()).toEqual(['users[1].email', 'users[1].name', 'users[1].role'].sort());
  });

  it('names a missing required field as required', () => {
    expect(verdict('CreateUserInput', { name: 'Ada' })).toEqual([{ field: 'email', message: 'is required' }]);
  });
});

describe('nullableFields', () => {
  it('lists the fields a full replacement sets to null when left out', () => {
    expect(nullableFields('ReplaceUserInput')).toEqual(['age']);
  });
});
