// The contract says all (SPEC §0.3): for each class of input the outside fuzzer found refused by the server though the
// contract allowed it (e-mails, sort values, `ids`, text with NUL or unpaired surrogates), the contract's own verdict
// (its schema compiled as consumers' validators compile it) and the server's verdict through HTTP are the same:
// accepted iff the contract allows it. Values are drawn by fast-check (its seed is printed on a failure).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Ajv } from 'ajv';
import type { FastifyInstance } from 'fastify';
import fc from 'fast-check';
import { loadOpenapi } from '../../src/contract/openapi-contract.js';
import { createTestApp } from '../support/app.js';
import { createAccount, type Account } from '../support/accounts.js';

/**
 * The contract's verdict on a value at a JSON pointer of openapi.yaml, as a tool that reads it by JSON Schema 2020-12's
 * rules: `format` an annotation only (tools disagree on what `email` allows; the pattern must say it), patterns with
 * the `u` flag.
 */
function contractVerdict(): (pointer: string, value: unknown) => boolean {
  const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });
  ajv.addSchema({ ...(loadOpenapi().document as object), $id: 'openapi' });
  const compiled = new Map<string, (value: unknown) => boolean>();
  return (pointer, value) => {
    let validate = compiled.get(pointer);
    if (!validate) compiled.set(pointer, (validate = ajv.compile({ $ref: `openapi#${pointer}` })));
    return validate(value);
  };
}

const parameterSchema = (name: string) => `/components/parameters/${name}/schema`;

describe('the contract says all (SPEC §0.3)', () => {
  let app: FastifyInstance;
  let admin: Account;
  let allows: (pointer: string, value: unknown) => boolean;
  let address = 0;
  const nextAddress = () => `198.18.${Math.floor(++address / 250)}.${(address % 250) + 1}`;
  beforeAll(async () => {
    app = await createTestApp();
    admin = await createAccount(app, 'admin@example.com', 'ADMIN');
    allows = contractVerdict();
  });
  afterAll(() => app?.close());

  it("an e-mail is accepted at sign-up iff the contract's Email schema allows it (the fuzzer: a@example, x@localhost, a|b&c@example.com)", async () => {
    const hostile = [
      'a@example',
      'x@localhost',
      'a|b&c@example.com',
      "o'neil@example.com",
      'a..b@example.com',
      '.a@example.com',
      'a@-x.com',
      'a@x-.com',
    ];
    const drawn = fc.sample(
      fc.oneof(
        fc.emailAddress(),
        fc
          .tuple(fc.stringMatching(/^[a-z|&.'+-]{1,8}$/), fc.constantFrom('example', 'example.com', 'ex-.com', 'localhost', 'x.y.z'))
          .map(([local, domain]) => `${local}@${domain}`),
      ),
      { numRuns: 60, seed: 46 },
    );
    for (const email of [...hostile, ...drawn]) {
      const response = await app.inject({
        method: 'POST',
        url: '/api/v1/users',
        payload: { name: 'Probe', email, password: 'correct-horse-battery' },
        remoteAddress: nextAddress(),
      });
      const accepted = response.statusCode === 201 || response.statusCode === 409; // 409: taken, a business outcome
      expect([email, accepted]).toEqual([email, allows('/components/schemas/Email', email)]);
      if (!accepted) expect(response.json().errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'email' })]));
    }
  });

  const collections = [
    { url: '/api/v1/users', sort: 'usersSort', sortBy: 'usersSortBy' },
    { url: '/api/v1/posts', sort: 'postsSort', sortBy: 'postsSortBy' },
    { url: '/api/v1/comments', sort: 'commentsSort', sortBy: 'commentsSortBy' },
    { url: '/api/v1/users/1/orders', sort: 'ordersSort', sortBy: 'ordersSortBy' },
  ];
  it.each(collections)(
    '$url: every sort value of the contract is accepted, and one outside it refused naming the parameter',
    async ({ url, sort, sortBy }) => {
      const base = url.replace('/users/1/', `/users/${admin.id}/`);
      for (const [parameter, component] of [
        ['sort', sort],
        ['sortBy', sortBy],
      ] as const) {
        const values = (loadOpenapi().document as unknown as { components: { parameters: Record<string, { schema: { enum: string[] } }> } })
          .components.parameters[component]!.schema.enum;
        for (const value of values) {
          const response = await app.inject({ method: 'GET', url: `${base}?${parameter}=${encodeURIComponent(value)}`, headers: admin.headers });
          expect([parameter, value, response.statusCode]).toEqual([parameter, value, 200]);
        }
        for (const value of ['zzz', 'name,DESC', ' name', '-name,asc', 'id,', 'passwordHash']) {
          expect(allows(parameterSchema(component), value)).toBe(false);
          const response = await app.inject({ method: 'GET', url: `${base}?${parameter}=${encodeURIComponent(value)}`, headers: admin.headers });
          expect([value, response.statusCode]).toEqual([value, 400]);
          expect(JSON.stringify(response.json())).toContain(parameter);
        }
      }
    },
  );

  it('users sorted by e-mail: in the enum, and refused to a caller who may not see e-mails (a documented outcome)', async () => {
    expect(allows(parameterSchema('usersSortBy'), 'email')).toBe(true);
    const anonymous = await app.inject({ method: 'GET', url: '/api/v1/users?sortBy=email' });
    expect(anonymous.statusCode).toBe(400);
  });

  it('`ids` is accepted iff its pattern allows it: positive, no leading zeros, within PostgreSQL integer, at most 100', async () => {
    const cases = [
      '007',
      '0',
      '1,,2',
      '2147483648',
      '99999999999',
      '1,2,3',
      '2147483647',
      Array.from({ length: 100 }, (_, i) => i + 1).join(','),
      Array.from({ length: 101 }, (_, i) => i + 1).join(','),
    ];
    const drawn = fc.sample(
      fc
        .array(fc.oneof(fc.nat(3_000_000_000).map(String), fc.stringMatching(/^0\d{1,3}$/)), { minLength: 1, maxLength: 4 })
        .map((ids) => ids.join(',')),
      {
        numRuns: 40,
        seed: 47,
      },
    );
    for (const ids of [...cases, ...drawn]) {
      const response = await app.inject({ method: 'DELETE', url: `/api/v1/users?ids=${ids}`, headers: admin.headers });
      const refusedForIds = response.statusCode === 400 && JSON.stringify(response.json()).includes('ids');
      expect([ids, !refusedForIds]).toEqual([ids, allows(parameterSchema('ids'), ids)]);
    }
  });

  it('text with NUL or an unpaired surrogate is refused by the contract and the server alike; other text, emoji included, by neither', async () => {
    const texts = ['plain', 'with \u0000 NUL', 'lone \uD800 high', 'lone \uDC00 low', 'paired 😀 emoji', 'tab\tand\nnewline', ' '];
    for (const title of texts) {
      const response = await app.inject({
        method: 'POST',
        url: `/api/v1/users/${admin.id}/posts`,
        headers: admin.headers,
        payload: { title, content: 'content' },
      });
      const accepted = response.statusCode === 201;
      expect([title, accepted]).toEqual([title, allows('/components/schemas/PostTitle', title)]);
      if (!accepted) expect(response.json().errors[0].field).toBe('title');
    }
    for (const name of texts) {
      const response = await app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: admin.headers, payload: { name } });
      const accepted = response.statusCode === 201;
      expect([name, accepted]).toEqual([name, allows('/components/schemas/CreateApiKeyInput/properties/name', name)]);
    }
  });
});
