// /api/v1/users/{id}/orders…: that user or an ADMIN; create (pending), list (paging, sort, filter, search), get, PATCH status.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Order } from '@users-posts/db';
import type { FastifyInstance } from 'fastify';
import { createTestApp } from '../support/app.js';
import { createAccount, type Account } from '../support/accounts.js';
import { signedUrl } from '../support/auth.js';

let app: FastifyInstance;
let alice: Account;
let bob: Account;
let admin: Account;
/** Alice's seeded orders, in id order. */
let orders: Order[];
let bobsOrder: Order;

const STATUS_ORDER = ['pending', 'paid', 'shipped', 'cancelled'];

const orderJson = (order: Order) => ({
  id: order.id,
  userId: order.userId,
  product: order.product,
  quantity: order.quantity,
  totalCents: order.totalCents,
  status: order.status,
  createdAt: order.createdAt.toISOString(),
});

beforeAll(async () => {
  app = await createTestApp();
  alice = await createAccount(app, 'alice@example.com');
  bob = await createAccount(app, 'bob@example.com');
  admin = await createAccount(app, 'admin@example.com', 'ADMIN');
  const seed = [
    { product: 'Widget', quantity: 1, totalCents: 500, status: 'paid' },
    { product: 'Gadget', quantity: 2, totalCents: 1500, status: 'pending' },
    { product: 'Blue widget', quantity: 3, totalCents: 100, status: 'cancelled' },
    { product: 'Gizmo', quantity: 1, totalCents: 1500, status: 'shipped' },
    { product: 'Doohickey', quantity: 5, totalCents: 0, status: 'pending' },
    { product: 'Thingamajig', quantity: 1, totalCents: 9999, status: 'paid' },
  ] as const;
  orders = [];
  for (const [i, data] of seed.entries()) {
    orders.push(await app.db.prisma.order.create({ data: { ...data, userId: alice.id, createdAt: new Date(Date.UTC(2024, 2, 20 - i)) } }));
  }
  bobsOrder = await app.db.prisma.order.create({ data: { product: 'Bob thing', quantity: 1, totalCents: 42, userId: bob.id } });
});
afterAll(() => app.close());

const url = (userId: number | string, rest = '') => `/api/v1/users/${userId}/orders${rest}`;
async function get(path: string, headers: Record<string, string> = {}) {
  const response = await app.inject({ method: 'GET', url: path, headers });
  return { status: response.statusCode, body: response.json(), headers: response.headers };
}
const ids = (items: { id: number }[]) => items.map((item) => item.id);
const snapshot = () => app.db.prisma.order.findMany({ orderBy: { id: 'asc' } });

describe('GET /api/v1/users/{id}/orders', () => {
  it('lists the owner’s orders in the exact envelope (owner and ADMIN alike)', async () => {
    const mine = await get(url(alice.id), alice.headers);
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual({
      code: 0,
      message: 'ok',
      paging: 'page',
      data: { items: orders.map(orderJson), total: 6, page: 1, pageSize: 20, totalPages: 1, totalExact: true },
    });
    expect((await get(url(alice.id), admin.headers)).body).toEqual(mine.body);
    expect(ids((await get(url(bob.id), bob.headers)).body.data.items)).toEqual([bobsOrder.id]);
  });

  it('refuses: 401 anonymous, 403 another user (known or not), 404 unknown user for an ADMIN, 400 bad id', async () => {
    const anonymous = await get(url(alice.id));
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ code: 40100, message: expect.any(String), error: expect.any(String) });
    expect(await get(url(alice.id), bob.headers)).toMatchObject({ status: 403, body: { code: 40300 } });
    expect(await get(url(987654), bob.headers)).toMatchObject({ status: 403, body: { code: 40300 } });
    expect(await get(url(987654), admin.headers)).toMatchObject({ status: 404, body: { code: 40400, message: 'User not found' } });
    const bad = await get(url('abc'), admin.headers);
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([expect.objectContaining({ field: 'id' })]);
  });

  it('pages by page/size, offset/limit and cursor', async () => {
    const page = await get(url(alice.id, '?page=2&size=4'), alice.headers);
    expect(page.body.data).toEqual({ items: orders.slice(4).map(orderJson), total: 6, page: 2, pageSize: 4, totalPages: 2, totalExact: true });
    const offset = await get(url(alice.id, '?offset=1&limit=2'), alice.headers);
    expect(offset.body.data).toEqual({ items: orders.slice(1, 3).map(orderJson), total: 6, page: 1, pageSize: 2, totalPages: 3, totalExact: true });
    const first = await get(url(alice.id, '?cursor=&limit=4'), alice.headers);
    expect(first.body.data).toEqual({ items: orders.slice(0, 4).map(orderJson), nextCursor: expect.any(String), hasMore: true });
    const second = await get(url(alice.id, `?cursor=${first.body.data.nextCursor}&limit=4`), alice.headers);
    expect(second.body.data).toEqual({ items: orders.slice(4).map(orderJson), nextCursor: null, hasMore: false });
  });

  it.each([
    ['sortBy=-status', 'status', 'desc'],
    ['sort=status', 'status', 'asc'],
    ['sort=totalCents,desc', 'totalCents', 'desc'],
    ['sort=totalCents&order=asc', 'totalCents', 'asc'],
    ['sortBy=-createdAt', 'createdAt', 'desc'],
  ] as const)('sorts by %s, also walking it with cursors (id breaks ties)', async (query, field, direction) => {
    const key = (order: Order): number =>
      field === 'status' ? STATUS_ORDER.indexOf(order.status) : field === 'createdAt' ? order.createdAt.getTime() : order.totalCents;
    const sign = direction === 'asc' ? 1 : -1;
    const expected = [...orders].sort((a, b) => sign * (key(a) - key(b) || a.id - b.id)).map((o) => o.id);
    expect(ids((await get(url(alice.id, `?${query}`), alice.headers)).body.data.items)).toEqual(expected);
    const seen: number[] = [];
    let cursor = '';
    for (let round = 0; round < 10; round++) {
      const { status, body } = await get(url(alice.id, `?${query}&limit=2&cursor=${encodeURIComponent(cursor)}`), alice.headers);
      expect(status).toBe(200);
      seen.push(...ids(body.data.items));
      if (!body.data.hasMore) break;
      cursor = body.data.nextCursor;
    }
    expect(seen).toEqual(expected);
  });

  it('filters by status, searches the product, reduces fields', async () => {
    expect(ids((await get(url(alice.id, '?status=pending'), alice.headers)).body.data.items)).toEqual([orders[1]!.id, orders[4]!.id]);
    expect(ids((await get(url(alice.id, '?q=WIDGET'), alice.headers)).body.data.items)).toEqual([orders[0]!.id, orders[2]!.id]);
    expect(ids((await get(url(alice.id, '?search=g&status=shipped'), alice.headers)).body.data.items)).toEqual([orders[3]!.id]);
    expect((await get(url(alice.id, '?fields=status,totalCents&limit=1'), alice.headers)).body.data.items).toEqual([
      { id: orders[0]!.id, status: 'paid', totalCents: 500 },
    ]);
  });

  it.each([
    ['status=lost', 'status'],
    ['sort=product', 'sort'],
    ['sortBy=quantity', 'sortBy'],
    ['fields=price', 'fields'],
    ['size=0', 'size'],
    ['limit=abc', 'limit'],
    ['cursor=garbage', 'cursor'],
  ])('rejects %s with 400 naming %s', async (query, field) => {
    const { status, body } = await get(url(alice.id, `?${query}`), alice.headers);
    expect(status).toBe(400);
    expect(body.code).toBe(40001);
    expect(body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  });
});

describe('POST /api/v1/users/{id}/orders', () => {
  const create = (userId: number, payload: unknown, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url: url(userId), payload: payload as object, headers });

  it('creates a pending order for oneself, or by an ADMIN: 201 + Location', async () => {
    const response = await create(bob.id, { product: 'Sprocket', quantity: 3, totalCents: 1299 }, bob.headers);
    expect(response.statusCode).toBe(201);
    const order = response.json().data;
    expect(response.json()).toEqual({
      code: 0,
      message: 'ok',
      data: {
        id: expect.any(Number),
        userId: bob.id,
        product: 'Sprocket',
        quantity: 3,
        totalCents: 1299,
        status: 'pending',
        createdAt: expect.any(String),
      },
    });
    expect(response.headers.location).toBe(`/api/v1/users/${bob.id}/orders/${order.id}`);
    expect((await get(response.headers.location as string, bob.headers)).body.data).toEqual(order);
    const byAdmin = await create(bob.id, { product: 'Free sample', quantity: 1000, totalCents: 0 }, admin.headers);
    expect(byAdmin.statusCode).toBe(201);
    expect(byAdmin.json().data).toMatchObject({ userId: bob.id, status: 'pending' });
    await app.db.prisma.order.deleteMany({ where: { id: { in: [order.id, byAdmin.json().data.id] } } });
  });

  it('refuses, writing nothing: 401, 403, 404, 422 naming fields, 400', async () => {
    const before = await snapshot();
    const valid = { product: 'Sprocket', quantity: 1, totalCents: 1 };

    const anonymous = await create(alice.id, valid);
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toMatchObject({ code: 40100, error: expect.any(String) });
    expect((await create(alice.id, valid, bob.headers)).json()).toMatchObject({ code: 40300 });
    expect((await create(alice.id, valid, bob.headers)).statusCode).toBe(403);
    const unknown = await create(987654, valid, admin.headers);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ code: 40400, message: 'User not found' });

    for (const [payload, fields] of [
      [{}, ['product', 'quantity', 'totalCents']],
      [{ product: '', quantity: 0, totalCents: -1 }, ['product', 'quantity', 'totalCents']],
      [{ product: 'x'.repeat(201), quantity: 1001, totalCents: 1.5 }, ['product', 'quantity', 'totalCents']],
      [{ ...valid, product: '   ' }, ['product']],
      [{ ...valid, status: 'paid' }, ['status']],
      [{ ...valid, quantity: '2' }, ['quantity']],
    ] as const) {
      const response = await create(alice.id, payload, alice.headers);
      expect(response.statusCode).toBe(422);
      expect(response.json().code).toBe(42200);
      expect([...new Set(response.json().errors.map((e: { field: string }) => e.field))].sort()).toEqual(fields);
    }

    const malformed = await app.inject({
      method: 'POST',
      url: url(alice.id),
      headers: { ...alice.headers, 'content-type': 'application/json' },
      payload: '{',
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().code).toBe(40000);
    expect(await snapshot()).toEqual(before);
  });
});

describe('GET and PATCH /api/v1/users/{id}/orders/{orderId}', () => {
  const patch = (userId: number, orderId: number, payload: unknown, headers: Record<string, string> = {}) =>
    app.inject({ method: 'PATCH', url: url(userId, `/${orderId}`), payload: payload as object, headers });

  it('gets one order; 404 when it is another user’s or unknown; 403 for another user; 400 bad orderId', async () => {
    expect(await get(url(alice.id, `/${orders[2]!.id}`), alice.headers)).toMatchObject({
      status: 200,
      body: { code: 0, message: 'ok', data: orderJson(orders[2]!) },
    });
    expect((await get(url(alice.id, `/${orders[2]!.id}`), admin.headers)).body.data).toEqual(orderJson(orders[2]!));
    expect(await get(url(alice.id, `/${bobsOrder.id}`), alice.headers)).toMatchObject({
      status: 404,
      body: { code: 40400, message: 'Order not found' },
    });
    expect((await get(url(alice.id, '/987654'), admin.headers)).status).toBe(404);
    expect((await get(url(alice.id, `/${orders[2]!.id}`), bob.headers)).status).toBe(403);
    expect((await get(url(alice.id, `/${orders[2]!.id}`))).status).toBe(401);
    const bad = await get(url(alice.id, '/x'), alice.headers);
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([expect.objectContaining({ field: 'orderId' })]);
  });

  it('the owner may cancel; an ADMIN (or a signed request) may set any status', async () => {
    const order = await app.db.prisma.order.create({ data: { product: 'Temp', quantity: 1, totalCents: 10, userId: alice.id } });
    const cancelled = await patch(alice.id, order.id, { status: 'cancelled' }, alice.headers);
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toEqual({ code: 0, message: 'ok', data: { ...orderJson(order), status: 'cancelled' } });
    const shipped = await patch(alice.id, order.id, { status: 'shipped' }, admin.headers);
    expect(shipped.json()).toEqual({ code: 0, message: 'ok', data: { ...orderJson(order), status: 'shipped' } });
    const payload = JSON.stringify({ status: 'paid' });
    const signed = signedUrl(app, 'PATCH', url(alice.id, `/${order.id}`), payload);
    const service = await app.inject({ method: 'PATCH', url: signed.url, payload, headers: { 'content-type': 'application/json' } });
    expect(service.statusCode).toBe(200);
    expect(service.json().data.status).toBe('paid');
    expect((await app.db.prisma.order.findUnique({ where: { id: order.id } }))?.status).toBe('paid');
    await app.db.prisma.order.delete({ where: { id: order.id } });
  });

  it('refuses, changing nothing: owner other than cancel 403, another user 403, 401, 404, 422, 400', async () => {
    const before = await snapshot();
    const pending = orders[1]!;
    for (const status of ['paid', 'shipped', 'pending']) {
      const response = await patch(alice.id, pending.id, { status }, alice.headers);
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual({ code: 40300, message: 'The owner of an order may only cancel it' });
    }
    expect((await patch(alice.id, pending.id, { status: 'cancelled' }, bob.headers)).statusCode).toBe(403);
    const anonymous = await patch(alice.id, pending.id, { status: 'cancelled' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toMatchObject({ code: 40100, error: expect.any(String) });
    expect(await patch(alice.id, bobsOrder.id, { status: 'cancelled' }, alice.headers)).toMatchObject({ statusCode: 404 });
    expect((await patch(alice.id, 987654, { status: 'paid' }, admin.headers)).json()).toEqual({ code: 40400, message: 'Order not found' });
    expect((await patch(987654, pending.id, { status: 'paid' }, admin.headers)).json()).toEqual({ code: 40400, message: 'User not found' });
    for (const [payload, fields] of [
      [{}, ['status']],
      [{ status: 'lost' }, ['status']],
      [{ status: 'paid', product: 'Other' }, ['product']],
    ] as const) {
      const response = await patch(alice.id, pending.id, payload, admin.headers);
      expect(response.statusCode).toBe(422);
      expect(response.json().code).toBe(42200);
      expect([...new Set(response.json().errors.map((e: { field: string }) => e.field))]).toEqual(fields);
    }
    expect((await patch(alice.id, 0, { status: 'paid' }, admin.headers)).statusCode).toBe(400);
    expect(await snapshot()).toEqual(before);
  });
});
