// REST handlers of the users collection (/api/v1/users…), typed by their operationIds.
import type { OperationHandlers } from '@users-posts/contracts';
import { parseCollectionQuery } from '../../collections/query.js';
import { AppError, notFound } from '../../errors/app-error.js';
import { parseId } from '../../services/ids.js';
import { BULK_MAX } from '../../services/users.js';
import { conditionalRead, expectationOf, viewHeaders } from '../conditional.js';
import { varyByCaller } from '../../http/vary.js';
import type { RestContext } from '../context.js';
import { consumeSignup } from '../../rate-limits/buckets.js';
import { ok, pageEnvelope } from '../envelope.js';
import { showsPrivateOfUser, USER_FIELDS, userResource, userValidator } from '../representations.js';

/** `ids=1,2,3` (shape checked by the contract) as database ids; 0, out-of-range or more than 100 ids → 400 naming `ids`. */
function parseIds(text: string): number[] {
  const parts = text.split(',');
  const ids = parts.map((part) => parseId(part));
  const bad = (message: string) => new AppError('BAD_QUERY_PARAMETER', `Invalid ids: ${message}`, [{ field: 'ids', message }]);
  if (parts.length > BULK_MAX) throw bad(`must list at most ${BULK_MAX} ids`);
  if (ids.some((id) => id === null)) throw bad('must be comma-separated positive integer ids');
  return [...new Set(ids as number[])];
}

/**
 * PUT and PATCH: the users service's one command, with the REST door's price of one's own e-mail (a sign-up of the
 * client's address, issue 40) and the expected version of the view the caller is shown; answered in that view.
 */
async function changeUser(
  kind: 'replace' | 'update',
  services: RestContext['services'],
  request: RestContext['request'],
  reply: RestContext['reply'],
  id: number,
  body: Parameters<RestContext['services']['users']['update']>[2],
) {
  const door = { admitEmailChange: () => consumeSignup(request.server, request) };
  const expectation = expectationOf(request, showsPrivateOfUser(request.principal, id));
  const user = await services.users[kind](request.principal, id, body, door, expectation);
  return {
    status: 200 as const,
    headers: viewHeaders(reply, userValidator(request.principal)(user)),
    body: ok(userResource(request.principal)(user)),
  };
}

export const usersHandlers = {
  listUsers: async ({ query }, { services, request, reply }) => {
    const collection = parseCollectionQuery(
      query,
      { sortable: services.users.sortableBy(request.principal), selectable: USER_FIELDS },
      services.limits,
    );
    const result = await services.users.page(request.principal, collection, { role: query.role, age: query.age });
    varyByCaller(reply); // who asks selects each item's view; the page's weak ETag hashes the bytes sent (conditional.ts)
    return { status: 200, body: pageEnvelope(result, userResource(request.principal), collection.fields) };
  },

  getUser: async ({ params }, { services, request, reply }) => {
    const user = await services.users.get(params.id);
    if (!user) throw notFound('User');
    return conditionalRead(request, viewHeaders(reply, userValidator(request.principal)(user)), () => ok(userResource(request.principal)(user)));
  },

  createUser: async ({ body }, { services, request, reply }) => {
    await consumeSignup(request.server, request); // sign-up bucket (SPEC §4), before anything is written
    const user = await services.users.create(body);
    return {
      status: 201,
      headers: { location: `/api/v1/users/${user.id}`, ...viewHeaders(reply, userValidator(request.principal)(user)) },
      body: ok(userResource(request.principal)(user)),
    };
  },

  replaceUser: ({ params, body }, { services, request, reply }) => changeUser('replace', services, request, reply, params.id, body),

  updateUser: ({ params, body }, { services, request, reply }) => changeUser('update', services, request, reply, params.id, body),

  // ADMIN (the service decides; the contract's x-required-role is the outer guard). Idempotent: 204 whether or not the user existed.
  deleteUser: async ({ params }, { services, request }) => {
    await services.users.delete(request.principal, params.id, expectationOf(request, showsPrivateOfUser(request.principal, params.id)));
    return { status: 204, body: undefined };
  },

  batchCreateUsers: async ({ body }, { services, request }) => {
    const users = await services.users.createMany(request.principal, body.users);
    return {
      status: 201,
      headers: { location: '/api/v1/users' },
      body: ok({ items: users.map(userResource(request.principal)), count: users.length }),
    };
  },

  bulkDeleteUsers: async ({ query }, { services, request }) => {
    const deleted = await services.users.deleteMany(request.principal, parseIds(query.ids));
    return { status: 200, body: ok({ deleted }) };
  },

  bulkUpdateUsers: async ({ body }, { services, request }) => {
    const updated = await services.users.updateMany(request.principal, [...new Set(body.ids)], body.data);
    return { status: 200, body: ok({ updated }) };
  },
} satisfies OperationHandlers<RestContext>;
