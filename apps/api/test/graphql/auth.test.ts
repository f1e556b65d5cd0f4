// @auth in the schema is enforced for every credential kind, with UNAUTHENTICATED / FORBIDDEN codes and no side effects.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { hashPassword } from '../../src/auth/credentials/passwords.js';
import { sign } from '../../src/auth/credentials/signature.js';
import { createTestApp } from '../support/app.js';
import { graphql } from '../support/graphql.js';

let app: FastifyInstance;
let user: { id: number; token: string };
let admin: { id: number; token: string };

async function account(email: string, role: 'ADMIN' | 'USER') {
  const created = await app.db.prisma.user.create({ data: { name: email, email, role, passwordHash: await hashPassword('password-123') } });
  const login = await app.inject({ method: 'POST', url: '/login', payload: { email, password: 'password-123' } });
  return { id: created.id, token: login.json().accessToken as string };
}

beforeAll(async () => {
  app = await createTestApp();
  user = await account('user@example.com', 'USER');
  admin = await account('admin@example.com', 'ADMIN');
});
afterAll(() => app.close());

const asBearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('@auth on currentUser (USER)', () => {
  it('refuses an anonymous caller with UNAUTHENTICATED', async () => {
    const result = await graphql(app, '{ currentUser { id } }');
    expect(result.data).toBeNull();
    expect(result.errors?.[0]).toMatchObject({ path: ['currentUser'], extensions: { code: 'UNAUTHENTICATED' } });
  });

  it('answers the caller for a Bearer token and for a session cookie alike', async () => {
    const viaToken = await graphql(app, '{ currentUser { id name } }', undefined, asBearer(user.token));
    expect(viaToken.data).toEqual({ currentUser: { id: String(user.id), name: 'user@example.com' } });
    const session = await app.inject({
      method: 'POST',
      url: '/login',
      payload: { email: 'user@example.com', password: 'password-123', session: true },
    });
    const sid = session.cookies.find((cookie) => cookie.name === 'sid')!.value;
    const viaCookie = await graphql(app, '{ currentUser { id } }', undefined, { cookie: `sid=${sid}` });
    expect(viaCookie.data).toEqual({ currentUser: { id: String(user.id) } });
  });

  it('answers HTTP 401 in GraphQL shape for a token that does not verify', async () => {
    const result = await graphql(app, '{ currentUser { id } }', undefined, asBearer('garbage'));
    expect(result.status).toBe(401);
    expect(result.errors).toEqual([{ message: 'Invalid access token', extensions: { code: 'UNAUTHENTICATED' } }]);
  });

  it('refuses the signed-request service principal, which is no user', async () => {
    const payload = JSON.stringify({ query: '{ currentUser { id } }' });
    const url = `/graphql?timestamp=${Date.now()}&nonce=n-current-user`;
    const signature = sign(app.config.secrets.signing, 'POST', url, payload);
    const response = await app.inject({
      method: 'POST',
      url: `${url}&signature=${signature}`,
      headers: { 'content-type': 'application/json' },
      payload,
    });
    expect(response.json().errors[0].extensions.code).toBe('FORBIDDEN');
  });
});

describe('@auth(requires: ADMIN) on deleteUser', () => {
  const DELETE = 'mutation Delete($id: ID!) { deleteUser(id: $id) }';

  it('refuses a USER with FORBIDDEN and deletes nothing', async () => {
    const victim = await app.db.prisma.user.create({ data: { name: 'victim', email: 'victim@example.com' } });
    const result = await graphql(app, DELETE, { id: String(victim.id) }, asBearer(user.token));
    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await app.db.prisma.user.count({ where: { id: victim.id } })).toBe(1);
  });

  it('refuses an anonymous caller with UNAUTHENTICATED', async () => {
    const result = await graphql(app, DELETE, { id: '1' });
    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('lets an ADMIN delete: true once, then false (never an error)', async () => {
    const target = await app.db.prisma.user.create({ data: { name: 'target', email: 'target@example.com' } });
    const first = await graphql(app, DELETE, { id: String(target.id) }, asBearer(admin.token));
    expect(first.data).toEqual({ deleteUser: true });
    const again = await graphql(app, DELETE, { id: String(target.id) }, asBearer(admin.token));
    expect(again).toMatchObject({ data: { deleteUser: false } });
    expect(again.errors).toBeUndefined();
    expect((await graphql(app, DELETE, { id: 'abc' }, asBearer(admin.token))).data).toEqual({ deleteUser: false });
  });

  it('lets a signed request (service principal with the ADMIN role) delete', async () => {
    const target = await app.db.prisma.user.create({ data: { name: 'signed', email: 'signed@example.com' } });
    const payload = JSON.stringify({ query: DELETE, variables: { id: String(target.id) } });
    const url = `/graphql?timestamp=${Date.now()}&nonce=n-delete`;
    const signature = sign(app.config.secrets.signing, 'POST', url, payload);
    const response = await app.inject({
      method: 'POST',
      url: `${url}&signature=${signature}`,
      headers: { 'content-type': 'application/json' },
      payload,
    });
    expect(response.json()).toEqual({ data: { deleteUser: true } });
  });
});
