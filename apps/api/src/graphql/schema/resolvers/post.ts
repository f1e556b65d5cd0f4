// Post field resolvers: the author through a DataLoader (at once when already read), timestamps as ISO-8601.
import type { PostResolvers } from '../generated/resolvers.js';
import { AppError } from '../../../errors/app-error.js';
import type { GraphQLContext } from '../context.js';
import { userById } from '../loaders.js';
import { encodeNodeId } from '../node-ids.js';
import type { PublicUser } from '../../../services/users.js';

/** The foreign key cascades, so a post without its author is a broken invariant, not user error. */
function present(author: PublicUser | null, post: { id: number; authorId: number }): PublicUser {
  if (!author) throw new AppError('INTERNAL', `author ${post.authorId} of post ${post.id} is missing`);
  return author;
}

export const Post: PostResolvers<GraphQLContext> = {
  nodeId: (post) => encodeNodeId('Post', post.id),
  createdAt: (post) => post.createdAt.toISOString(),
  author: (post, _args, { loaders }) => {
    const author = userById(loaders, post.authorId);
    return author instanceof Promise ? author.then((found) => present(found, post)) : present(author, post);
  },
};
