// Conditional requests (issue 13 §2): strong ETags of single resources (the row version; a user's per view, issue 39),
// If-None-Match → 304, If-Match on PUT/PATCH/DELETE → 412 with the current ETag (lost updates refused, nothing changed),
// `*`, weak ETags of collections, REQUIRE_IF_MATCH → 428, and the same version in GraphQL (`version`,
// `expectedVersion`). The attacks across a user's two views are in adversary/representation-validators.test.ts.
import { describe, expect, it } from '@jest/globals';
import { createAccount, type Account } from '../support/accounts.js';
import { createTestApp, useTestApp } from '../support/app.js';
import { graphql } from '../support/graphql.js';

const suite = useTestApp();

const userUrl = (account: Account) => `/api/v1/users/${account.id}`;
const read = (url: string, headers: Record<string, string> = {}) => suite.app.inject({ method: 'GET', url, headers });
const patch = (url: string, payload: object, headers: Record<string, string>) => suite.app.inject({ method: 'PATCH', url, payload, headers });
const stored = (account: Account) => suite.app.db.prisma.user.findUniqueOrThrow({ where: { id: account.id } });
/** The ETag of the view that shows the private fields (the user's own, an ADMIN's): both versions of the row. */
const privateEtagOf = (row: { version: number; privateVersion: number }) => `"${row.version}-${row.privateVersion}"`;

describe('reads: a strong ETag per resource, 304 when it is still current', () => {
  it('answers the row version as ETag; If-None-Match with it (or W/ of it, or *) is 304 without a body', async () => {
    const first = await read(userUrl(suite.alice));
    expect(first.statusCode).toBe(200);
    const etag = first.headers.etag as string;
    expect(etag).toBe(`"${(await stored(suite.alice)).version}"`);
    for (const inm of [etag, `W/${etag}`, `"999", ${etag}`, '*']) {
      const again = await read(userUrl(suite.alice), { 'if-none-match': inm });
      expect(again.statusCode).toBe(304);
      expect(again.payload).toBe('');
      expect(again.headers.etag).toBe(etag);
    }
    expect((await read(userUrl(suite.alice), { 'if-none-match': '"999"' })).statusCode).toBe(200);
  });

  it('gives every kind of single resource its ETag (post, comment, order) and 304s them', async () => {
    const post = await suite.app.inject({
      method: 'POST',
      url: `/api/v1/users/${suite.alice.id}/posts`,
      headers: suite.alice.headers,
      payload: { title: 't', content: 'c' },
    });
    expect(post.headers.etag).toBe('"1"');
    const postId = post.json().data.id as number;
    const comment = await suite.app.inject({
      method: 'POST',
      url: `/api/v1/posts/${postId}/comments`,
      headers: suite.bob.headers,
      payload: { body: 'b' },
    });
    const order = await suite.app.inject({
      method: 'POST',
      url: `/api/v1/users/${suite.alice.id}/orders`,
      headers: suite.alice.headers,
      payload: { product: 'p', quantity: 1, totalCents: 1 },
    });
    const urls: [string, Record<string, string>][] = [
      [`/api/v1/posts/${postId}`, {}],
      [`/api/v1/users/${suite.alice.id}/posts/${postId}`, {}],
      [`/api/v1/comments/${comment.json().data.id}`, {}],
      [`/api/v1/users/${suite.alice.id}/orders/${order.json().data.id}`, suite.alice.headers],
    ];
    for (const [url, headers] of urls) {
      const answer = await read(url, headers);
      expect(answer.headers.etag).toBe('"1"');
      expect((await read(url, { ...headers, 'if-none-match': '"1"' })).statusCode).toBe(304);
    }
  });
});

describe('writes: If-Match makes them conditional', () => {
  it('attack (lost update): two clients read the same version and both write; one wins, the other gets 412 and changes nothing', async () => {
    const etag = (await read(userUrl(suite.bob), suite.bob.headers)).headers.etag as string;
    const [first, second] = await Promise.all([
      patch(userUrl(suite.bob), { name: 'Written by tab one' }, { ...suite.bob.headers, 'if-match': etag }),
      patch(userUrl(suite.bob), { name: 'Written by tab two' }, { ...suite.bob.headers, 'if-match': etag }),
    ]);
    const statuses = [first.statusCode, second.statusCode].sort();
    expect(statuses).toEqual([200, 412]);
    const [winner, loser] = first.statusCode === 200 ? [first, second] : [second, first];
    const row = await stored(suite.bob);
    expect(row.name).toBe(winner.json().data.name);
    expect(winner.headers.etag).toBe(privateEtagOf(row));
    expect(loser.json()).toEqual({ code: 41200, message: expect.stringContaining('has changed') });
    expect(loser.headers.etag).toBe(privateEtagOf(row)); // the current one of bob's view: read again, then decide
    // the loser retries with what it now knows, and wins
    const retry = await patch(userUrl(suite.bob), { name: 'Written by tab two' }, { ...suite.bob.headers, 'if-match': loser.headers.etag as string });
    expect(retry.statusCode).toBe(200);
    expect((await stored(suite.bob)).name).toBe('Written by tab two');
  });

  it('compares strongly: a weak or foreign tag never matches (412), `*` matches an existing resource', async () => {
    const etag = (await read(userUrl(suite.alice), suite.alice.headers)).headers.etag as string;
    const before = await stored(suite.alice);
    // …and another view's ETag is another representation's: the public one does not match alice's own view.
    for (const ifMatch of [`W/${etag}`, '"not-ours"', 'garbage', `"${before.version}"`]) {
      const refused = await patch(userUrl(suite.alice), { age: 77 }, { ...suite.alice.headers, 'if-match': ifMatch });
      expect(refused.statusCode).toBe(412);
    }
    expect(await stored(suite.alice)).toEqual(before);
    const any = await patch(userUrl(suite.alice), { age: 41 }, { ...suite.alice.headers, 'if-match': '*' });
    expect(any.statusCode).toBe(200);
    expect(any.headers.etag).toBe(privateEtagOf({ ...before, version: before.version + 1 }));
  });

  it('PUT and DELETE honour it too; `*` on a missing user is 412 without an ETag', async () => {
    const carol = await createAccount(suite.app, 'carol@example.com');
    // Carol and an ADMIN are shown the same view (the e-mail included): one ETag for both.
    const etag = (await read(userUrl(carol), carol.headers)).headers.etag as string;
    expect((await read(userUrl(carol), suite.admin.headers)).headers.etag).toBe(etag);
    const put = (ifMatch: string) =>
      suite.app.inject({
        method: 'PUT',
        url: userUrl(carol),
        headers: { ...carol.headers, 'if-match': ifMatch },
        payload: { name: 'Carol', email: carol.email },
      });
    expect((await put(etag)).statusCode).toBe(200);
    expect((await put(etag)).statusCode).toBe(412); // that version is gone now
    const remove = (ifMatch: string) =>
      suite.app.inject({ method: 'DELETE', url: userUrl(carol), headers: { ...suite.admin.headers, 'if-match': ifMatch } });
    expect((await remove(etag)).statusCode).toBe(412);
    expect(await suite.app.db.prisma.user.count({ where: { id: carol.id } })).toBe(1);
    expect((await remove((await read(userUrl(carol), suite.admin.headers)).headers.etag as string)).statusCode).toBe(204);
    const gone = await remove('*');
    expect(gone.statusCode).toBe(412);
    expect(gone.headers.etag).toBeUndefined();
    // unconditional DELETE keeps its documented idempotence
    expect((await suite.app.inject({ method: 'DELETE', url: userUrl(carol), headers: suite.admin.headers })).statusCode).toBe(204);
  });

  it('an order PATCH with a stale ETag is 412 and the order keeps its status', async () => {
    const order = await suite.app.inject({
      method: 'POST',
      url: `/api/v1/users/${suite.alice.id}/orders`,
      headers: suite.alice.headers,
      payload: { product: 'q', quantity: 1, totalCents: 5 },
    });
    const url = `/api/v1/users/${suite.alice.id}/orders/${order.json().data.id}`;
    const shipped = await patch(url, { status: 'paid' }, { ...suite.admin.headers, 'if-match': order.headers.etag as string });
    expect(shipped.statusCode).toBe(200);
    expect(shipped.headers.etag).toBe('"2"');
    const stale = await patch(url, { status: 'cancelled' }, { ...suite.alice.headers, 'if-match': order.headers.etag as string });
    expect(stale.statusCode).toBe(412);
    expect(stale.headers.etag).toBe('"2"');
    expect((await read(url, suite.alice.headers)).json().data.status).toBe('paid');
    // a write that changes nothing keeps the version: its ETag stays good for the next conditional write
    const again = await patch(url, { status: 'paid' }, { ...suite.admin.headers, 'if-match': '"2"' });
    expect(again.headers.etag).toBe('"2"');
  });

  it('every write path raises the version, bulk updates by an ADMIN included (the database bumps it)', async () => {
    const before = (await read(userUrl(suite.bob))).headers.etag as string;
    const bulk = await suite.app.inject({
      method: 'PATCH',
      url: '/api/v1/users',
      headers: suite.admin.headers,
      payload: { ids: [suite.bob.id], data: { age: 30 } },
    });
    expect(bulk.statusCode).toBe(200);
    const after = await read(userUrl(suite.bob), { 'if-none-match': before });
    expect(after.statusCode).toBe(200);
    expect(after.headers.etag).not.toBe(before);
  });
});

describe('collections: a weak ETag of the answer', () => {
  it('304 while the page is unchanged, 200 with a new ETag once a row on it changed', async () => {
    const url = '/api/v1/users?pageSize=50&sort=id';
    const first = await read(url);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/);
    expect(first.headers.vary).toBe('Authorization, Cookie, Accept'); // who asks selects the users' views
    const unchanged = await read(url, { 'if-none-match': etag });
    expect(unchanged.statusCode).toBe(304);
    expect(unchanged.payload).toBe('');
    expect(unchanged.headers.vary).toBe('Authorization, Cookie, Accept');
    await patch(userUrl(suite.alice), { name: 'Alice, renamed' }, suite.alice.headers);
    const changed = await read(url, { 'if-none-match': etag });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(changed.json().data.items.map((user: { name: string }) => user.name)).toContain('Alice, renamed');
  });
});

describe('REQUIRE_IF_MATCH', () => {
  it('refuses a write without If-Match with 428 and changes nothing; with it, the write goes through', async () => {
    const strict = await createTestApp({ requireIfMatch: true });
    try {
      const dave = await createAccount(strict, 'dave@example.com');
      const url = `/api/v1/users/${dave.id}`;
      const refused = await strict.inject({ method: 'PATCH', url, headers: dave.headers, payload: { name: 'Unconditional' } });
      expect(refused.statusCode).toBe(428);
      expect(refused.json()).toEqual({ code: 42800, message: expect.stringContaining('If-Match') });
      expect((await strict.db.prisma.user.findUniqueOrThrow({ where: { id: dave.id } })).name).toBe('dave');
      const etag = (await strict.inject({ method: 'GET', url, headers: dave.headers })).headers.etag as string;
      const allowed = await strict.inject({ method: 'PATCH', url, headers: { ...dave.headers, 'if-match': etag }, payload: { name: 'Conditional' } });
      expect(allowed.statusCode).toBe(200);
    } finally {
      await strict.close();
    }
  });
});

describe('GraphQL: the same version, and expectedVersion on updateUser', () => {
  const UPDATE = 'mutation($id: ID!, $v: Int) { updateUser(id: $id, input: { age: 50 }, expectedVersion: $v) { id version age } }';

  it('exposes the version REST answers as ETag; a stale expectedVersion is CONFLICT with currentVersion, nothing changed', async () => {
    const rest = await read(userUrl(suite.alice));
    const version = Number((rest.headers.etag as string).slice(1, -1));
    const { data } = await graphql<{ user: { version: number } }>(suite.app, `{ user(id: "${suite.alice.id}") { version } }`);
    expect(data?.user.version).toBe(version);

    const stale = await graphql(suite.app, UPDATE, { id: String(suite.alice.id), v: version - 1 }, suite.alice.headers);
    expect(stale.errors?.[0]?.extensions).toEqual({ code: 'CONFLICT', currentVersion: version });
    expect((await stored(suite.alice)).version).toBe(version);

    const fresh = await graphql<{ updateUser: { version: number; age: number } }>(
      suite.app,
      UPDATE,
      { id: String(suite.alice.id), v: version },
      suite.alice.headers,
    );
    expect(fresh.errors).toBeUndefined();
    expect(fresh.data?.updateUser).toMatchObject({ version: version + 1, age: 50 });
    // left out: unconditional, as before; the same age again changes nothing shown, so the version stays (SPEC §3.1)
    const plain = await graphql<{ updateUser: { version: number } }>(suite.app, UPDATE, { id: String(suite.alice.id) }, suite.alice.headers);
    expect(plain.data?.updateUser.version).toBe(version + 1);
  });
});
