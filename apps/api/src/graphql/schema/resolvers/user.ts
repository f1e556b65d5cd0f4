// User field resolvers: relations through DataLoaders, timestamps as ISO-8601.
import type { Post } from '@users-posts/db';
import type { UserResolvers } from '../generated/resolvers.js';
import { isPostReadableField, type PostReadableField } from '../../../services/posts.js';
import type { GraphQLContext } from '../context.js';
import { selectedFieldNames } from '../selection.js';
import { encodeNodeId } from '../node-ids.js';

/** The post fields (columns) a selection of Post reads, in a stable order; `author` needs `authorId`, which always comes. */
const postFieldsCache = new WeakMap<ReadonlySet<string>, readonly PostReadableField[]>();
function postFieldsOf(names: ReadonlySet<string>): readonly PostReadableField[] {
  let fields = postFieldsCache.get(names);
  if (!fields) postFieldsCache.set(names, (fields = [...names].filter(isPostReadableField).sort()));
  return fields;
}

export const User: UserResolvers<GraphQLContext> = {
  nodeId: (user) => encodeNodeId('User', user.id),
  createdAt: (user) => user.createdAt.toISOString(),
  emailVerified: (user) => user.emailVerifiedAt !== null,
  // Only the columns the selection reads are loaded; the Post resolvers read no field that was not asked for.
  posts: (user, _args, { loaders }, info) => loaders.postsByAuthorId(postFieldsOf(selectedFieldNames(info))).load(user.id) as Promise<Post[]>,
};
