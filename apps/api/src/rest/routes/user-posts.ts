// /api/v1/users/{id}/posts…: a user's posts (nested, two levels at most); creating one emits postCreated.
import type { OperationHandlers } from '@users-posts/contracts';
import { parseCollectionQuery } from '../../collections/query.js';
import { notFound } from '../../errors/app-error.js';
import { POST_SORT_FIELDS } from '../../services/posts.js';
import { conditionalRead, etagOf } from '../conditional.js';
import type { RestContext } from '../context.js';
import { ok, pageEnvelope } from '../envelope.js';
import { POST_FIELDS, postResource } from '../representations.js';

async function existingUser(context: RestContext, id: number): Promise<void> {
  if (!(await context.services.users.get(id))) throw notFound('User');
}

export const userPostsHandlers = {
  listUserPosts: async ({ params, query }, context) => {
    const collection = parseCollectionQuery(query, { sortable: POST_SORT_FIELDS, selectable: POST_FIELDS }, context.services.limits);
    await existingUser(context, params.id);
    const result = await context.services.posts.page(collection, { authorId: params.id });
    return { status: 200, body: pageEnvelope(result, postResource, collection.fields) };
  },

  getUserPost: async ({ params }, { services, request }) => {
    const post = await services.posts.get(params.postId);
    if (!post || post.authorId !== params.id) throw notFound('Post');
    return conditionalRead(request, post.version, () => ok(postResource(post)));
  },

  createUserPost: async ({ params, body }, context) => {
    const post = await context.services.posts.create(context.request.principal, { ...body, authorId: params.id });
    return {
      status: 201,
      headers: { location: `/api/v1/users/${params.id}/posts/${post.id}`, etag: etagOf(post.version) },
      body: ok(postResource(post)),
    };
  },
} satisfies OperationHandlers<RestContext>;
