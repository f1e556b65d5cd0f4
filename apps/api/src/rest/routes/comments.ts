// /api/v1/comments… and POST /api/v1/posts/{id}/comments: public reads, commenting by any logged-in user.
import type { OperationHandlers } from '@users-posts/contracts';
import { parseCollectionQuery } from '../../collections/query.js';
import { notFound } from '../../errors/app-error.js';
import { COMMENT_SORT_FIELDS } from '../../services/comments.js';
import { conditionalRead, etagOf } from '../conditional.js';
import type { RestContext } from '../context.js';
import { ok, pageEnvelope } from '../envelope.js';
import { COMMENT_FIELDS, commentResource } from '../representations.js';

export const commentsHandlers = {
  listComments: async ({ query }, { services }) => {
    const collection = parseCollectionQuery(query, { sortable: COMMENT_SORT_FIELDS, selectable: COMMENT_FIELDS }, services.limits);
    const result = await services.comments.page(collection, { postId: query.postId, userId: query.userId });
    return { status: 200, body: pageEnvelope(result, commentResource, collection.fields) };
  },

  getComment: async ({ params }, { services, request }) => {
    const comment = await services.comments.get(params.id);
    if (!comment) throw notFound('Comment');
    return conditionalRead(request, comment.version, () => ok(commentResource(comment)));
  },

  createPostComment: async ({ params, body }, context) => {
    const comment = await context.services.comments.create(context.request.principal, params.id, body);
    return {
      status: 201,
      headers: { location: `/api/v1/comments/${comment.id}`, etag: etagOf(comment.version) },
      body: ok(commentResource(comment)),
    };
  },
} satisfies OperationHandlers<RestContext>;
