// Post field resolvers: the author through a DataLoader, timestamps as ISO-8601.
import type { PostResolvers } from '@users-posts/contracts';
import { AppError } from '../../errors.js';
import type { GraphQLContext } from '../context.js';

export const Post: PostResolvers<GraphQLContext> = {
  createdAt: (post) => post.createdAt.toISOString(),
  author: async (post, _args, { loaders }) => {
    const author = await loaders.userById.load(post.authorId);
    // The foreign key cascades, so a post without its author is a broken invariant, not user error.
    if (!author) throw new AppError('INTERNAL', `author ${post.authorId} of post ${post.id} is missing`);
    return author;
  },
};
