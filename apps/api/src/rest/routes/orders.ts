// /api/v1/users/{id}/orders…: a user's orders, for that user or an ADMIN (ownership is checked by the orders service).
import type { OperationHandlers } from '@users-posts/contracts';
import { parseCollectionQuery } from '../../collections/query.js';
import { ORDER_SORT_FIELDS } from '../../services/orders.js';
import { conditionalRead, etagOf, expectationOf } from '../conditional.js';
import type { RestContext } from '../context.js';
import { ok, pageEnvelope } from '../envelope.js';
import { ORDER_FIELDS, orderResource } from '../representations.js';

export const ordersHandlers = {
  listUserOrders: async ({ params, query }, { request, services }) => {
    const collection = parseCollectionQuery(query, { sortable: ORDER_SORT_FIELDS, selectable: ORDER_FIELDS }, services.limits);
    const result = await services.orders.page(request.principal, params.id, collection, { status: query.status });
    return { status: 200, body: pageEnvelope(result, orderResource, collection.fields) };
  },

  createUserOrder: async ({ params, body }, { request, services }) => {
    const order = await services.orders.create(request.principal, params.id, body);
    return {
      status: 201,
      headers: { location: `/api/v1/users/${params.id}/orders/${order.id}`, etag: etagOf(order.version) },
      body: ok(orderResource(order)),
    };
  },

  getUserOrder: async ({ params }, { request, services }) => {
    const order = await services.orders.get(request.principal, params.id, params.orderId);
    return conditionalRead(request, order.version, () => ok(orderResource(order)));
  },

  updateUserOrder: async ({ params, body }, { request, services }) => {
    const order = await services.orders.updateStatus(request.principal, params.id, params.orderId, body.status, expectationOf(request));
    return { status: 200, headers: { etag: etagOf(order.version) }, body: ok(orderResource(order)) };
  },
} satisfies OperationHandlers<RestContext>;
