// Writes on /api/v1/users…: sign-up, PUT vs PATCH, delete, batch create, bulk delete and bulk update — every success
// with its exact envelope, every refusal with its status and code, and the database unchanged after each refusal.
import { describe, expect, it } from '@jest/globals';
import { createAccount } from '../support/accounts.js';
import { useTestApp } from '../support/app.js';
import { nullRepresentation } from '../support/shapes.js';

const suite = useTestApp();

type Method = 'POST' | 'PUT' | 'PATCH' | 'DELETE';
const send = (method: Method, url: string, payload?: object, headers: Record<string, string> = {}) =>
  suite.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });

/** A user as itself, an ADMIN or a service sees it (its private fields included). */
const userShape = (fields: Record<string, unknown>) => ({
  ...nullRepresentation('User'),
  id: expect.any(Number),
  emailVerified: false,
  role: 'USER',
  createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
  updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
  ...fields,
});

/** Every user row, to compare before and after a refusal. */
const snapshot = () => suite.app.db.prisma.user.findMany({ orderBy: { id: 'asc' } });
const fieldsOf = (body: { errors?: { field: string }[] }) => (body.errors ?? []).map((error) => error.field).sort();

async function newUser(email: string, extra: Record<string, unknown> = {}): Promise<number> {
  const user = await suite.app.db.prisma.user.create({ data: { name: email.split('@')[0]!, email, ...extra } });
  return user.id;
}

describe('POST /api/v1/users (sign-up)', () => {
  it('creates a USER: 201, Location, exact envelope, email lower-cased, password usable, no secrets', async () => {
    const response = await send('POST', '/api/v1/users', {
      name: 'Ada Lovelace',
      email: 'Ada@Example.COM',
      age: 36,
      password: 'correct-horse-battery',
    });
    expect(response.statusCode).toBe(201);
    const body = response.json();
    expect(body).toEqual({ code: 0, message: 'ok', data: userShape({ name: 'Ada Lovelace', email: 'ada@example.com', age: 36 }) });
    expect(response.headers.location).toBe(`/api/v1/users/${body.data.id}`);
    expect(JSON.stringify(body)).not.toMatch(/password|tokenVersion/i);
    // The sign-up's answer shows the new account to its maker; a later anonymous read does not show the e-mail.
    const { emailVerified: _private, ...shown } = body.data;
    expect((await suite.app.inject(response.headers.location as string)).json().data).toEqual({ ...shown, email: '' });
    const login = await send('POST', '/login', { email: 'ada@example.com', password: 'correct-horse-battery' });
    expect(login.statusCode).toBe(200);
  });

  it('refuses a duplicate email in any case with 409 naming email; nothing written', async () => {
    const before = await snapshot();
    const response = await send('POST', '/api/v1/users', { name: 'Again', email: 'ALICE@example.com' });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toMatchObject({ code: 40900, errors: [{ field: 'email', message: expect.any(String) }] });
    expect(await snapshot()).toEqual(before);
  });

  it('refuses invalid bodies with 422 naming each field (contract and domain); role is not accepted; nothing written', async () => {
    const before = await snapshot();
    const bad = await send('POST', '/api/v1/users', { name: '', email: 'not-an-email', age: 151, password: 'short' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().code).toBe(42200);
    expect(fieldsOf(bad.json())).toEqual(['age', 'email', 'name', 'password']);
    const missing = await send('POST', '/api/v1/users', { age: 3 });
    expect(missing.statusCode).toBe(422);
    expect(fieldsOf(missing.json())).toEqual(['email', 'name']);
    const role = await send('POST', '/api/v1/users', { name: 'Mallory', email: 'mallory@example.com', role: 'ADMIN' });
    expect(role.statusCode).toBe(422);
    expect(fieldsOf(role.json())).toEqual(['role']);
    // Passes the contract (non-blank check is the domain's): a name of spaces.
    const blank = await send('POST', '/api/v1/users', { name: '   ', email: 'blank@example.com' });
    expect(blank.statusCode).toBe(422);
    expect(fieldsOf(blank.json())).toEqual(['name']);
    expect(await snapshot()).toEqual(before);
  });
});

describe('PUT and PATCH /api/v1/users/{id}', () => {
  it('PUT replaces fully: omitted age becomes null, role kept; PATCH changes only the fields sent', async () => {
    const carol = await createAccount(suite.app, 'carol@example.com');
    const id = carol.id;
    await suite.app.db.prisma.user.update({ where: { id }, data: { age: 40 } });

    const patched = await send('PATCH', `/api/v1/users/${id}`, { name: 'Carol P' }, carol.headers);
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toEqual({ code: 0, message: 'ok', data: userShape({ id, name: 'Carol P', email: 'carol@example.com', age: 40 }) });

    const cleared = await send('PATCH', `/api/v1/users/${id}`, { age: null }, carol.headers);
    expect(cleared.json().data).toMatchObject({ name: 'Carol P', age: null });
    await send('PATCH', `/api/v1/users/${id}`, { age: 41 }, carol.headers);

    const replaced = await send('PUT', `/api/v1/users/${id}`, { name: 'Carol R', email: 'Carol.R@Example.com' }, carol.headers);
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json()).toEqual({
      code: 0,
      message: 'ok',
      data: userShape({ id, name: 'Carol R', email: 'carol.r@example.com', age: null, role: 'USER' }),
    });
    const row = await suite.app.db.prisma.user.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({ name: 'Carol R', email: 'carol.r@example.com', age: null, role: 'USER' });
    expect(row.passwordHash).not.toBeNull(); // the password is not part of the representation and is kept

    const again = await send('PUT', `/api/v1/users/${id}`, { name: 'Carol R', email: 'carol.r@example.com', age: 42 }, carol.headers);
    expect(again.json().data).toMatchObject({ age: 42 });
  });

  it('an ADMIN may change anyone, including role (PUT and PATCH); 404 for an unknown id', async () => {
    const id = await newUser('dave@example.com');
    const put = await send('PUT', `/api/v1/users/${id}`, { name: 'Dave', email: 'dave@example.com', role: 'ADMIN' }, suite.admin.headers);
    expect(put.statusCode).toBe(200);
    expect(put.json().data).toMatchObject({ id, role: 'ADMIN' });
    const patch = await send('PATCH', `/api/v1/users/${id}`, { role: 'USER' }, suite.admin.headers);
    expect(patch.json().data).toMatchObject({ id, role: 'USER', name: 'Dave' });

    for (const [method, payload] of [
      ['PUT', { name: 'X', email: 'x@example.com' }],
      ['PATCH', { name: 'X' }],
    ] as const) {
      const missing = await send(method, '/api/v1/users/987654', payload, suite.admin.headers);
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toEqual({ code: 40400, message: 'User not found' });
    }
  });

  it('refuses: anonymous 401, another user 403 (also for an unknown id), role from a non-ADMIN 403; nothing changed', async () => {
    const before = await snapshot();
    for (const method of ['PUT', 'PATCH'] as const) {
      const payload = { name: 'Hacked', email: 'hacked@example.com' };
      const anonymous = await send(method, `/api/v1/users/${suite.bob.id}`, payload);
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.json()).toMatchObject({ code: 40100, error: expect.any(String) });
      const other = await send(method, `/api/v1/users/${suite.bob.id}`, payload, suite.alice.headers);
      expect(other.statusCode).toBe(403);
      expect(other.json()).toMatchObject({ code: 40300 });
      const unknown = await send(method, '/api/v1/users/987654', payload, suite.alice.headers);
      expect(unknown.statusCode).toBe(403);
      // Any role from a non-ADMIN is refused, even the role they already have.
      for (const role of ['ADMIN', 'USER']) {
        const own = await send(method, `/api/v1/users/${suite.alice.id}`, { ...payload, role }, suite.alice.headers);
        expect(own.statusCode).toBe(403);
        expect(own.json()).toEqual({ code: 40300, message: 'Only an ADMIN may change a role' });
      }
    }
    expect(await snapshot()).toEqual(before);
  });

  it('refuses: 409 for another user’s email (any case), 422 naming fields, 400 for a non-numeric id; nothing changed', async () => {
    const before = await snapshot();
    const taken = await send('PATCH', `/api/v1/users/${suite.alice.id}`, { email: 'BOB@example.com' }, suite.alice.headers);
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toMatchObject({ code: 40900, errors: [{ field: 'email' }] });
    const takenPut = await send('PUT', `/api/v1/users/${suite.alice.id}`, { name: 'A', email: 'bob@example.com' }, suite.alice.headers);
    expect(takenPut.statusCode).toBe(409);

    const putMissing = await send('PUT', `/api/v1/users/${suite.alice.id}`, { age: 3 }, suite.alice.headers);
    expect(putMissing.statusCode).toBe(422);
    expect(fieldsOf(putMissing.json())).toEqual(['email', 'name']);
    const patchBad = await send('PATCH', `/api/v1/users/${suite.alice.id}`, { name: '', email: 'nope', age: -1, extra: 1 }, suite.alice.headers);
    expect(patchBad.statusCode).toBe(422);
    expect(fieldsOf(patchBad.json())).toEqual(['age', 'email', 'extra', 'name']);
    const patchEmpty = await send('PATCH', `/api/v1/users/${suite.alice.id}`, {}, suite.alice.headers);
    expect(patchEmpty.statusCode).toBe(422);
    const patchNullName = await send('PATCH', `/api/v1/users/${suite.alice.id}`, { name: null }, suite.alice.headers);
    expect(patchNullName.statusCode).toBe(422);
    expect(fieldsOf(patchNullName.json())).toEqual(['name']);

    const badId = await send('PATCH', '/api/v1/users/abc', { name: 'x' }, suite.admin.headers);
    expect(badId.statusCode).toBe(400);
    expect(badId.json()).toMatchObject({ code: 40001, errors: [{ field: 'id' }] });
    expect(await snapshot()).toEqual(before);
  });
});

describe('DELETE /api/v1/users/{id}', () => {
  it('an ADMIN deletes (posts cascade): 204, again 204 when already deleted', async () => {
    const id = await newUser('erin@example.com');
    await suite.app.db.prisma.post.create({ data: { title: 't', content: 'c', authorId: id } });
    const first = await send('DELETE', `/api/v1/users/${id}`, undefined, suite.admin.headers);
    expect(first.statusCode).toBe(204);
    expect(first.body).toBe('');
    expect(await suite.app.db.prisma.user.findUnique({ where: { id } })).toBeNull();
    expect(await suite.app.db.prisma.post.count({ where: { authorId: id } })).toBe(0);
    expect((await send('DELETE', `/api/v1/users/${id}`, undefined, suite.admin.headers)).statusCode).toBe(204);
    expect((await send('DELETE', '/api/v1/users/987654', undefined, suite.admin.headers)).statusCode).toBe(204);
  });

  it('refuses anonymous (401) and non-ADMINs, even on themselves (403); nothing deleted', async () => {
    const before = await snapshot();
    expect((await send('DELETE', `/api/v1/users/${suite.bob.id}`)).statusCode).toBe(401);
    const other = await send('DELETE', `/api/v1/users/${suite.bob.id}`, undefined, suite.alice.headers);
    expect(other.statusCode).toBe(403);
    expect(other.json()).toMatchObject({ code: 40300 });
    expect((await send('DELETE', `/api/v1/users/${suite.alice.id}`, undefined, suite.alice.headers)).statusCode).toBe(403);
    expect(await snapshot()).toEqual(before);
  });
});

describe('POST /api/v1/users/batch', () => {
  const batch = (users: object[], headers: Record<string, string> = suite.admin.headers) => send('POST', '/api/v1/users/batch', { users }, headers);

  it('creates all: 201, Location of the collection, {items, count}', async () => {
    const response = await batch([
      { name: 'Grace Hopper', email: 'Grace@example.com', age: 85 },
      { name: 'Alan Turing', email: 'alan@example.com', password: 'enigma-machine' },
    ]);
    expect(response.statusCode).toBe(201);
    expect(response.headers.location).toBe('/api/v1/users');
    expect(response.json()).toEqual({
      code: 0,
      message: 'ok',
      data: {
        items: [
          userShape({ name: 'Grace Hopper', email: 'grace@example.com', age: 85 }),
          userShape({ name: 'Alan Turing', email: 'alan@example.com' }),
        ],
        count: 2,
      },
    });
    const [grace, alan] = response.json().data.items;
    expect(alan.id).toBeGreaterThan(grace.id);
    expect((await send('POST', '/login', { email: 'alan@example.com', password: 'enigma-machine' })).statusCode).toBe(200);
  });

  it('all or nothing: one invalid user → 422 naming users[i].field, nothing created', async () => {
    const before = await snapshot();
    const contract = await batch([
      { name: 'ok1', email: 'ok1@example.com' },
      { name: 'ok2', email: 'ok2@example.com' },
      { name: 'bad', email: 'not-an-email' },
    ]);
    expect(contract.statusCode).toBe(422);
    expect(contract.json()).toMatchObject({ code: 42200, errors: [{ field: 'users[2].email' }] });
    const domain = await batch([
      { name: 'ok1', email: 'ok1@example.com' },
      { name: '  ', email: 'ok2@example.com' },
    ]);
    expect(domain.statusCode).toBe(422);
    expect(fieldsOf(domain.json())).toEqual(['users[1].name']);
    const several = await batch([{ email: 'x@example.com' }, { name: 'y', email: 'y@example.com', age: 200, role: 'ADMIN' }]);
    expect(several.statusCode).toBe(422);
    expect(fieldsOf(several.json())).toEqual(['users[0].name', 'users[1].age', 'users[1].role']);
    expect((await batch([])).statusCode).toBe(422);
    const tooMany = Array.from({ length: 101 }, (_, i) => ({ name: `n${i}`, email: `n${i}@example.com` }));
    expect((await batch(tooMany)).statusCode).toBe(422);
    expect(await snapshot()).toEqual(before);
  });

  it('duplicate emails inside the batch or with existing users → 409 naming users[i].email, nothing created', async () => {
    const before = await snapshot();
    const inside = await batch([
      { name: 'a', email: 'dup1@example.com' },
      { name: 'b', email: 'new2@example.com' },
      { name: 'c', email: 'DUP1@example.com' },
    ]);
    expect(inside.statusCode).toBe(409);
    expect(inside.json()).toMatchObject({ code: 40900, errors: [{ field: 'users[2].email', message: expect.any(String) }] });
    expect(inside.json().errors).toHaveLength(1);
    const existing = await batch([
      { name: 'a', email: 'fresh1@example.com' },
      { name: 'b', email: 'fresh2@example.com' },
      { name: 'c', email: 'Alice@Example.com' },
    ]);
    expect(existing.statusCode).toBe(409);
    expect(existing.json()).toMatchObject({ code: 40900, errors: [{ field: 'users[2].email' }] });
    expect(await snapshot()).toEqual(before);
  });

  it('refuses anonymous (401) and non-ADMINs (403) before looking at the body; nothing created', async () => {
    const before = await snapshot();
    expect((await batch([{ name: 'a', email: 'anon@example.com' }], {})).statusCode).toBe(401);
    const user = await batch([{ name: 'a', email: 'user@example.com' }], suite.alice.headers);
    expect(user.statusCode).toBe(403);
    expect(user.json()).toMatchObject({ code: 40300 });
    expect((await batch([{ bogus: true }], suite.alice.headers)).statusCode).toBe(403);
    expect(await snapshot()).toEqual(before);
  });
});

describe('DELETE /api/v1/users?ids=…', () => {
  it('deletes the existing ones: 200 {deleted: n}; unknown and repeated ids are not errors', async () => {
    const a = await newUser('bulk-del-a@example.com');
    const b = await newUser('bulk-del-b@example.com');
    const keep = await newUser('bulk-del-keep@example.com');
    const response = await send('DELETE', `/api/v1/users?ids=${a},${b},987654,${a}`, undefined, suite.admin.headers);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ code: 0, message: 'ok', data: { deleted: 2 } });
    expect(await suite.app.db.prisma.user.count({ where: { id: { in: [a, b] } } })).toBe(0);
    expect(await suite.app.db.prisma.user.findUnique({ where: { id: keep } })).not.toBeNull();
    const again = await send('DELETE', `/api/v1/users?ids=${a},${b}`, undefined, suite.admin.headers);
    expect(again.json()).toEqual({ code: 0, message: 'ok', data: { deleted: 0 } });
  });

  it('refuses: 400 naming ids (missing, malformed, zero, more than 100), 401, 403; nothing deleted', async () => {
    const before = await snapshot();
    const many = Array.from({ length: 101 }, (_, i) => i + 1).join(',');
    for (const url of [
      '/api/v1/users',
      '/api/v1/users?ids=',
      '/api/v1/users?ids=1,x',
      '/api/v1/users?ids=1,,2',
      '/api/v1/users?ids=0',
      '/api/v1/users?ids=99999999999',
      `/api/v1/users?ids=${many}`,
    ]) {
      const response = await send('DELETE', url, undefined, suite.admin.headers);
      expect({ url, status: response.statusCode }).toEqual({ url, status: 400 });
      expect(response.json().code).toBe(40001);
      expect(new Set(fieldsOf(response.json()))).toEqual(new Set(['ids']));
    }
    expect((await send('DELETE', `/api/v1/users?ids=${suite.bob.id}`)).statusCode).toBe(401);
    expect((await send('DELETE', `/api/v1/users?ids=${suite.bob.id}`, undefined, suite.alice.headers)).statusCode).toBe(403);
    expect(await snapshot()).toEqual(before);
  });
});

describe('PATCH /api/v1/users (bulk update)', () => {
  const bulk = (payload: object, headers: Record<string, string> = suite.admin.headers) => send('PATCH', '/api/v1/users', payload, headers);

  it('applies data to the existing ids: 200 {updated: n}; unknown ids skipped; only the fields sent change', async () => {
    const a = await newUser('bulk-up-a@example.com', { age: 20 });
    const b = await newUser('bulk-up-b@example.com', { age: 30 });
    const response = await bulk({ ids: [a, b, 987654, a], data: { role: 'ADMIN' } });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ code: 0, message: 'ok', data: { updated: 2 } });
    const rows = await suite.app.db.prisma.user.findMany({ where: { id: { in: [a, b] } }, orderBy: { id: 'asc' } });
    expect(rows.map((row) => [row.role, row.age, row.name])).toEqual([
      ['ADMIN', 20, 'bulk-up-a'],
      ['ADMIN', 30, 'bulk-up-b'],
    ]);
    const clear = await bulk({ ids: [a, b], data: { age: null, name: 'Renamed' } });
    expect(clear.json().data).toEqual({ updated: 2 });
    expect(await suite.app.db.prisma.user.count({ where: { id: { in: [a, b] }, age: null, name: 'Renamed', role: 'ADMIN' } })).toBe(2);
    // An email may land on exactly one existing user.
    const email = await bulk({ ids: [a, 987654], data: { email: 'Bulk-Up-New@example.com' } });
    expect(email.json().data).toEqual({ updated: 1 });
    expect((await suite.app.db.prisma.user.findUniqueOrThrow({ where: { id: a } })).email).toBe('bulk-up-new@example.com');
    expect((await bulk({ ids: [987654], data: { name: 'nobody' } })).json().data).toEqual({ updated: 0 });
  });

  it('refuses: 409 for one email on several users or another user’s email, 422 naming fields, 401, 403; nothing changed', async () => {
    const a = await newUser('bulk-ref-a@example.com');
    const b = await newUser('bulk-ref-b@example.com');
    const before = await snapshot();
    const several = await bulk({ ids: [a, b], data: { email: 'same@example.com' } });
    expect(several.statusCode).toBe(409);
    expect(several.json()).toMatchObject({ code: 40900, errors: [{ field: 'data.email' }] });
    const taken = await bulk({ ids: [a], data: { email: 'BOB@example.com', name: 'x' } });
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toMatchObject({ code: 40900, errors: [{ field: 'data.email' }] });

    const invalid = await bulk({ ids: [a, b], data: { name: '', age: 151 } });
    expect(invalid.statusCode).toBe(422);
    expect(fieldsOf(invalid.json())).toEqual(['data.age', 'data.name']);
    const blank = await bulk({ ids: [a, b], data: { name: '  ' } });
    expect(blank.statusCode).toBe(422);
    expect(fieldsOf(blank.json())).toEqual(['data.name']);
    expect((await bulk({ ids: [a], data: {} })).statusCode).toBe(422);
    expect(fieldsOf((await bulk({ ids: [], data: { name: 'x' } })).json())).toEqual(['ids']);
    expect(fieldsOf((await bulk({ ids: [0], data: { name: 'x' } })).json())).toEqual(['ids[0]']);
    expect(fieldsOf((await bulk({ data: { name: 'x' } })).json())).toEqual(['ids']);

    expect((await bulk({ ids: [a], data: { name: 'x' } }, {})).statusCode).toBe(401);
    const user = await bulk({ ids: [suite.alice.id], data: { role: 'ADMIN' } }, suite.alice.headers);
    expect(user.statusCode).toBe(403);
    expect(user.json()).toMatchObject({ code: 40300 });
    expect(await snapshot()).toEqual(before);
  });
});
