// /api/v1/posts…: the public posts collection (filter by author, search over title and content) and one post.
import type { OperationHandlers } from '@users-posts/contracts';
import { parseCollectionQuery } from '../../collections/query.js';
import { notFound } from '../../errors/app-error.js';
import { POST_SORT_FIELDS } from '../../services/posts.js';
import { conditionalRead } from '../conditional.js';
import type { RestContext } from '../context.js';
import { ok, pageEnvelope } from '../envelope.js';
import { POST_FIELDS, postResource } from '../representations.js';

export const postsHandlers = {
  listPosts: async ({ query }, { services }) => {
    const collection = parseCollectionQuery(query, { sortable: POST_SORT_FIELDS, selectable: POST_FIELDS }, services.limits);
    const result = await services.posts.page(collection, { authorId: query.authorId });
    return { status: 200, body: pageEnvelope(result, postResource, collection.fields) };
  },

  getPost: async ({ params }, { services, request }) => {
    const post = await services.posts.get(params.id);
    if (!post) throw notFound('Post');
    return conditionalRead(request, post.version, () => ok(postResource(post)));
  },
} satisfies OperationHandlers<RestContext>;
