// REST handlers of the users collection (/api/v1/users…), typed by their operationIds.
import type { OperationHandlers } from '@users-posts/contracts';
import { parseCollectionQuery } from '../../collections/query.js';
import { notFound } from '../../errors.js';
import { USER_SORT_FIELDS } from '../../services/users.js';
import type { RestContext } from '../context.js';
import { ok, pageEnvelope } from '../envelope.js';
import { USER_FIELDS, userResource } from '../representations.js';

export const usersHandlers = {
  listUsers: async ({ query }, { services }) => {
    const collection = parseCollectionQuery(query, { sortable: USER_SORT_FIELDS, selectable: USER_FIELDS });
    const result = await services.users.page(collection, { role: query.role, age: query.age });
    return { status: 200, body: pageEnvelope(result, userResource, collection.fields) };
  },

  getUser: async ({ params }, { services }) => {
    const user = await services.users.get(params.id);
    if (!user) throw notFound('User');
    return { status: 200, body: ok(userResource(user)) };
  },
} satisfies OperationHandlers<RestContext>;
