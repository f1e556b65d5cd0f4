// The comments domain: reads of comments (filters by post and author, search over body) and commenting on a post.
import { ENUM_VALUES } from '@users-posts/contracts';
import type { Comment, PrismaClient, SqlReader } from '@users-posts/db';
import { requireUser, type Principal } from '../auth/principal.js';
import { CREATED_AT_FIELD, findPage, ID_FIELD, type PageResult, type PageSource } from '../collections/page.js';
import type { CollectionQuery } from '../collections/query.js';
import { DEFAULT_COLLECTION_LIMITS, type CollectionLimits } from '../config/collection-limits.js';
import { AppError } from '../errors/app-error.js';
import { parseId } from './ids.js';
import { translatePrismaError } from '../errors/prisma.js';
import { storedAsIs } from './storage-mapping.js';
import { validateInput, type ContractInput, type Unvalidated } from './validation.js';

/** SPEC §4 allow-list for sorting comments. */
/** The allow-list of openapi.yaml (`CommentSortField`, whose forms `sort` and `sortBy` enumerate): one source for both doors. */
export const COMMENT_SORT_FIELDS = ENUM_VALUES.CommentSortField;
export type CommentSortField = (typeof COMMENT_SORT_FIELDS)[number];

export interface CommentFilter {
  postId?: number | undefined;
  /** The comment's author. */
  userId?: number | undefined;
}

/** A new comment: the contract's CreateCommentInput. */
export type NewComment = Unvalidated<ContractInput<'CreateCommentInput'>>;

/** Every column of `comments` under the model's field names (see PUBLIC_USER_COLUMNS in users.ts). */
export const COMMENT_COLUMNS = 'id, body, post_id AS "postId", author_id AS "authorId", created_at AS "createdAt", version';

/** The comments collection for the pager. */
const COMMENTS_PAGE: PageSource<CommentSortField | 'postId' | 'authorId' | 'body'> = {
  collection: 'comments',
  table: 'comments',
  columns: COMMENT_COLUMNS,
  fields: {
    id: ID_FIELD,
    createdAt: CREATED_AT_FIELD,
    postId: { column: 'post_id', kind: 'integer' },
    authorId: { column: 'author_id', kind: 'integer' },
    body: { column: 'body', kind: 'string' },
  },
};

export class CommentsService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly sql: SqlReader,
    private readonly limits: CollectionLimits = DEFAULT_COLLECTION_LIMITS,
  ) {}

  /** One page of comments by the collection conventions. */
  page(query: CollectionQuery<CommentSortField>, filter: CommentFilter = {}): Promise<PageResult<Comment>> {
    return findPage(this.sql, COMMENTS_PAGE, query, { equal: { postId: filter.postId, authorId: filter.userId }, searchIn: ['body'] }, this.limits);
  }

  async get(id: string | number): Promise<Comment | null> {
    const dbId = parseId(id);
    return dbId === null ? null : this.prisma.comment.findUnique({ where: { id: dbId } });
  }

  /** A comment by the calling user on post `postId` (a user principal only; 404 for an unknown post). */
  async create(principal: Principal, postId: string | number, input: NewComment): Promise<Comment> {
    const caller = requireUser(principal);
    const dbPostId = parseId(postId);
    if (dbPostId === null || !(await this.prisma.post.findUnique({ where: { id: dbPostId }, select: { id: true } }))) {
      throw new AppError('NOT_FOUND', 'Post not found');
    }
    validateInput('CreateCommentInput', input);
    try {
      return await this.prisma.comment.create({ data: { ...storedAsIs('Comment', input), postId: dbPostId, authorId: caller.userId } });
    } catch (error) {
      // The post (or the caller) vanished between the check and the write.
      translatePrismaError(error, { foreignKey: 'Post not found' });
    }
  }
}
