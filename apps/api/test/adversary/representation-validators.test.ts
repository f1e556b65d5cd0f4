// Attacks on the validators of a user's two views (issue 39 item 4, SPEC §0.1 and §3.1): a copy of the anonymous view
// revalidated for the owner, a private ETag presented by an anonymous reader, an e-mail verification or change watched
// through the public ETag, `version` and `updatedAt`, and If-Match across views. Each names what it tries and proves
// that nothing leaked, went stale or was overwritten; mail is real SMTP to an in-process server.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { randomUUID } from 'node:crypto';
import { bearer, createAuthTestApp, createUser, login, signedUrl, type TestUser } from '../support/auth.js';
import { graphql } from '../support/graphql.js';
import { SmtpSink, tokenIn } from '../support/smtp.js';

const PASSWORD = 'a fine passphrase';
const ORIGIN = 'https://app.users-posts.test';
let app: FastifyInstance;
let smtp: SmtpSink;
let admin: Record<string, string>;
let stranger: Record<string, string>;

beforeAll(async () => {
  smtp = await SmtpSink.start();
  app = await createAuthTestApp({
    config: {
      mail: { smtpUrl: smtp.url, from: 'Users & Posts <no-reply@users-posts.test>', publicUrl: 'https://app.users-posts.test' },
      rateLimits: { loginMax: 1000, loginIpMax: 1000 },
      corsOrigins: [ORIGIN],
    },
  });
  admin = await signIn(await createUser(app, { email: 'the-admin@example.com', role: 'ADMIN' }));
  stranger = await signIn(await createUser(app, { email: 'stranger@example.com' }));
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const uniqueEmail = (name: string) => `${name}-${randomUUID().slice(0, 8)}@example.com`;
const userUrl = (id: number) => `/api/v1/users/${id}`;
const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });
const patch = (id: number, payload: object, headers: Record<string, string>) => app.inject({ method: 'PATCH', url: userUrl(id), payload, headers });
const stored = (id: number) => app.db.prisma.user.findUniqueOrThrow({ where: { id } });

async function signIn(user: TestUser): Promise<Record<string, string>> {
  const response = await login(app, { email: user.email, password: user.password });
  expect(response.statusCode).toBe(200);
  return bearer(response.json().accessToken as string);
}

/** A sign-up through the API (it mails a verification link), and the new owner signed in with a fresh login. */
async function signUp(name: string) {
  const email = uniqueEmail(name);
  const verification = smtp.next(email);
  const created = await app.inject({ method: 'POST', url: '/api/v1/users', payload: { name, email, password: PASSWORD } });
  expect(created.statusCode).toBe(201);
  const id = created.json().data.id as number;
  return { id, email, created, verification, headers: await signIn({ id, email, password: PASSWORD }) };
}

/** What an anonymous observer can see of a user's validators, through both doors. */
async function publicValidators(id: number) {
  const rest = await get(userUrl(id));
  const door = await graphql<{ user: { version: number } }>(app, `{ user(id: "${id}") { version } }`);
  return { etag: rest.headers.etag, updatedAt: rest.json().data.updatedAt as string, version: door.data?.user.version };
}

const varyOf = (response: LightMyRequestResponse) =>
  String(response.headers.vary ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase());

describe('attack: the owner revalidates a copy of the anonymous view', () => {
  it('If-None-Match with the anonymous ETag answers the owner, an ADMIN, a cookie and a signed request 200 with the e-mail, never 304', async () => {
    const owner = await signUp('cached');
    const anonymous = await get(userUrl(owner.id));
    expect(anonymous.json().data.email).toBe('');
    const anonymousEtag = anonymous.headers.etag as string;

    const cookieLogin = await login(app, { email: owner.email, password: PASSWORD, session: true });
    const sid = cookieLogin.cookies.find((cookie) => cookie.name === 'sid')!.value;
    const signed = signedUrl(app, 'GET', userUrl(owner.id)).url;
    const asThePrivateView: [string, Record<string, string>][] = [
      [userUrl(owner.id), owner.headers],
      [userUrl(owner.id), { cookie: `sid=${sid}` }],
      [userUrl(owner.id), admin],
      [signed, {}],
    ];
    for (const [url, headers] of asThePrivateView) {
      // A shared cache revalidating every variant it holds lists them all (RFC 9111 §4.3.1).
      const revalidated = await get(url, { ...headers, 'if-none-match': `"999", ${anonymousEtag}, W/${anonymousEtag}` });
      expect(revalidated.statusCode).toBe(200);
      expect(revalidated.json().data).toMatchObject({ email: owner.email, emailVerified: false });
      expect(revalidated.headers.etag).not.toBe(anonymousEtag);
    }
  });

  it('an anonymous reader presenting the private ETag gets the public view, never a 304 that would confirm it', async () => {
    const owner = await signUp('probed');
    const privateEtag = (await get(userUrl(owner.id), owner.headers)).headers.etag as string;
    for (const headers of [{}, stranger]) {
      const probe = await get(userUrl(owner.id), { ...headers, 'if-none-match': privateEtag });
      expect(probe.statusCode).toBe(200);
      expect(probe.json().data.email).toBe('');
      expect(probe.headers.etag).not.toBe(privateEtag);
    }
  });

  it('a page of users cached anonymously and revalidated by the owner answers 200 with the e-mail', async () => {
    const owner = await signUp('listed');
    const url = '/api/v1/users?sort=id&order=desc&pageSize=5';
    const anonymous = await get(url);
    expect(anonymous.json().data.items.find((user: { id: number }) => user.id === owner.id)).toMatchObject({ email: '' });
    expect(varyOf(anonymous)).toEqual(expect.arrayContaining(['authorization', 'cookie', 'accept']));
    const mine = await get(url, { ...owner.headers, 'if-none-match': anonymous.headers.etag as string });
    expect(mine.statusCode).toBe(200);
    expect(mine.json().data.items.find((user: { id: number }) => user.id === owner.id)).toMatchObject({ email: owner.email });
  });
});

describe('each view has its own ETag, and says what selects it', () => {
  it('anonymous and other users share the public ETag; the owner, an ADMIN and a signed request share the private one; the two differ', async () => {
    const owner = await signUp('viewed');
    const url = userUrl(owner.id);
    const row = await stored(owner.id);
    const publicViews = [await get(url), await get(url, stranger)];
    const privateViews = [await get(url, owner.headers), await get(url, admin), await get(signedUrl(app, 'GET', url).url)];
    for (const view of publicViews) {
      expect(view.json().data.email).toBe('');
      expect(view.headers.etag).toBe(`"${row.version}"`);
    }
    for (const view of privateViews) {
      expect(view.json().data.email).toBe(owner.email);
      expect(view.headers.etag).toBe(`"${row.version}-${row.privateVersion}"`);
    }
    // The sign-up's own answer showed the private view: its ETag is that view's.
    expect(owner.created.headers.etag).toBe(privateViews[0]!.headers.etag);
    // Each view revalidates with its own ETag.
    expect((await get(url, { 'if-none-match': publicViews[0]!.headers.etag as string })).statusCode).toBe(304);
    expect((await get(url, { ...owner.headers, 'if-none-match': privateViews[0]!.headers.etag as string })).statusCode).toBe(304);
  });

  it('Vary names the credentials beside Accept on both views and their 304s; the private view is kept out of shared caches', async () => {
    const owner = await signUp('varied');
    const url = userUrl(owner.id);
    const anonymous = await get(url);
    const own = await get(url, owner.headers);
    const notModified = await get(url, { ...owner.headers, 'if-none-match': own.headers.etag as string });
    expect(notModified.statusCode).toBe(304);
    for (const answer of [anonymous, own, notModified, owner.created]) {
      expect(varyOf(answer)).toEqual(expect.arrayContaining(['authorization', 'cookie', 'accept']));
    }
    // From a browser page: CORS's `Origin` is kept beside them.
    const fromPage = await get(url, { origin: ORIGIN });
    expect(varyOf(fromPage)).toEqual(expect.arrayContaining(['origin', 'authorization', 'cookie', 'accept']));
    // The public view may be stored by anyone (keyed by those headers); the private one never by a shared cache.
    expect(anonymous.headers['cache-control']).toBeUndefined();
    expect(own.headers['cache-control']).toBe('no-store');
    expect(notModified.headers['cache-control']).toBe('no-store');
    expect(owner.created.headers['cache-control']).toBe('private'); // an anonymous sign-up's answer shows its own e-mail
  });

  it('attack: a GraphQL GET answered anonymously is keyed on the credentials too, so a shared cache never hands it to the owner', async () => {
    const owner = await signUp('graphql-get');
    const url = `/graphql?query=${encodeURIComponent(`{ user(id: "${owner.id}") { email } }`)}`;
    const anonymous = await get(url, { accept: 'application/graphql-response+json' });
    const own = await get(url, { ...owner.headers, accept: 'application/graphql-response+json' });
    expect(anonymous.json()).toEqual({ data: { user: { email: '' } } });
    expect(own.json()).toEqual({ data: { user: { email: owner.email } } });
    for (const answer of [anonymous, own]) expect(varyOf(answer)).toEqual(expect.arrayContaining(['authorization', 'cookie']));
  });
});

describe('attack: watching private changes through the public validator', () => {
  it('an e-mail verification moves neither the public ETag, nor version, nor updatedAt; the owner’s ETag moves', async () => {
    const owner = await signUp('verifier');
    const before = await publicValidators(owner.id);
    const ownBefore = (await get(userUrl(owner.id), owner.headers)).headers.etag as string;

    const verified = await app.inject({ method: 'POST', url: '/auth/email/verify', payload: { token: tokenIn(await owner.verification) } });
    expect(verified.statusCode).toBe(204);
    expect((await stored(owner.id)).emailVerifiedAt).not.toBeNull();

    expect(await publicValidators(owner.id)).toEqual(before);
    expect((await get(userUrl(owner.id), { 'if-none-match': before.etag as string })).statusCode).toBe(304);
    const own = await get(userUrl(owner.id), { ...owner.headers, 'if-none-match': ownBefore });
    expect(own.statusCode).toBe(200);
    expect(own.json().data.emailVerified).toBe(true);
    expect(own.headers.etag).not.toBe(ownBefore);
  });

  it('a change of the e-mail alone (by the owner, then by an ADMIN) leaves the public validator; the owner sees the new address', async () => {
    const owner = await signUp('mover');
    const before = await publicValidators(owner.id);
    let ownEtag = (await get(userUrl(owner.id), owner.headers)).headers.etag as string;
    for (const [headers, email] of [
      [owner.headers, uniqueEmail('moved')],
      [admin, uniqueEmail('moved-by-admin')],
    ] as const) {
      const changed = await patch(owner.id, { email }, headers);
      expect(changed.statusCode).toBe(200);
      expect(await publicValidators(owner.id)).toEqual(before);
      const own = await get(userUrl(owner.id), { ...owner.headers, 'if-none-match': ownEtag });
      expect(own.statusCode).toBe(200);
      expect(own.json().data).toMatchObject({ email, emailVerified: false });
      expect(own.headers.etag).toBe(changed.headers.etag);
      expect(own.headers.etag).not.toBe(ownEtag);
      ownEtag = own.headers.etag as string;
    }
    // A public field still moves both validators.
    expect((await patch(owner.id, { name: 'Renamed' }, owner.headers)).statusCode).toBe(200);
    const after = await publicValidators(owner.id);
    expect(after.etag).not.toBe(before.etag);
    expect(after.version).toBe(before.version! + 1);
    expect(after.updatedAt).not.toBe(before.updatedAt);
    expect((await get(userUrl(owner.id), owner.headers)).headers.etag).not.toBe(ownEtag);
  });
});

describe('If-Match names the view its caller is shown', () => {
  it('the owner’s and an ADMIN’s PATCH go through with their view’s ETag; the public ETag from them is 412 with their current one', async () => {
    const owner = await signUp('writer');
    const publicEtag = (await get(userUrl(owner.id))).headers.etag as string;
    const before = await stored(owner.id);
    const refused = await patch(owner.id, { age: 33 }, { ...owner.headers, 'if-match': publicEtag });
    expect(refused.statusCode).toBe(412);
    expect(await stored(owner.id)).toEqual(before);
    const ownEtag = (await get(userUrl(owner.id), owner.headers)).headers.etag as string;
    expect(refused.headers.etag).toBe(ownEtag); // the ETag to send: of the view this caller is shown

    const own = await patch(owner.id, { age: 34 }, { ...owner.headers, 'if-match': ownEtag });
    expect(own.statusCode).toBe(200);
    const adminEtag = (await get(userUrl(owner.id), admin)).headers.etag as string;
    expect(adminEtag).toBe(own.headers.etag); // the same bytes, the same ETag
    const byAdmin = await patch(owner.id, { age: 35 }, { ...admin, 'if-match': adminEtag });
    expect(byAdmin.statusCode).toBe(200);
    expect((await stored(owner.id)).age).toBe(35);
  });

  it('attack (lost update of the e-mail): a PUT based on a read from before an e-mail change is 412 and overwrites nothing', async () => {
    const owner = await signUp('replaced');
    const read = await get(userUrl(owner.id), owner.headers);
    const moved = uniqueEmail('moved-meanwhile');
    expect((await patch(owner.id, { email: moved }, admin)).statusCode).toBe(200);
    // The public fields did not change, the view the owner read did.
    const stale = await app.inject({
      method: 'PUT',
      url: userUrl(owner.id),
      headers: { ...owner.headers, 'if-match': read.headers.etag as string },
      payload: { name: 'replaced', email: owner.email },
    });
    expect(stale.statusCode).toBe(412);
    expect((await stored(owner.id)).email).toBe(moved);
    const fresh = await app.inject({
      method: 'PUT',
      url: userUrl(owner.id),
      headers: { ...owner.headers, 'if-match': stale.headers.etag as string },
      payload: { name: 'replaced', email: moved },
    });
    expect(fresh.statusCode).toBe(200);
  });

  it('an ADMIN’s DELETE with the public ETag is 412; with its own view’s it deletes', async () => {
    const owner = await signUp('deleted');
    const remove = (etag: string) => app.inject({ method: 'DELETE', url: userUrl(owner.id), headers: { ...admin, 'if-match': etag } });
    expect((await remove((await get(userUrl(owner.id))).headers.etag as string)).statusCode).toBe(412);
    expect(await app.db.prisma.user.count({ where: { id: owner.id } })).toBe(1);
    expect((await remove((await get(userUrl(owner.id), admin)).headers.etag as string)).statusCode).toBe(204);
  });

  it('GraphQL’s expectedVersion is the public version every caller reads, and still guards the owner’s change', async () => {
    const owner = await signUp('graphql');
    const { version } = await publicValidators(owner.id);
    const update = 'mutation($id: ID!, $v: Int) { updateUser(id: $id, input: { age: 20 }, expectedVersion: $v) { version email } }';
    const stale = await graphql(app, update, { id: String(owner.id), v: version! - 1 }, owner.headers);
    expect(stale.errors?.[0]?.extensions).toEqual({ code: 'CONFLICT', currentVersion: version });
    const done = await graphql<{ updateUser: { version: number; email: string } }>(app, update, { id: String(owner.id), v: version }, owner.headers);
    expect(done.data?.updateUser).toEqual({ version: version! + 1, email: owner.email });
  });
});
