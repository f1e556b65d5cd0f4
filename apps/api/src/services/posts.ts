// The posts domain: reads and writes of posts, shared by the REST and GraphQL doors; creation emits postCreated.
import { PREPARED, type Post, type PrismaClient, type SqlReader } from '@users-posts/db';
import { PAGE_SIZE_MAX as MAX_PAGE, ENUM_VALUES } from '@users-posts/contracts';
import { canActFor, requireAuthenticated, type Principal } from '../auth/principal.js';
import { decodeCursor, encodeCursor } from '../collections/cursor.js';
import { CREATED_AT_FIELD, findPage, ID_FIELD, type PageResult, type PageSource } from '../collections/page.js';
import type { CollectionQuery } from '../collections/query.js';
import { DEFAULT_COLLECTION_LIMITS, type CollectionLimits } from '../config/collection-limits.js';
import { AppError } from '../errors/app-error.js';
import type { EventBus } from '../shared-state/events/bus.js';
import { parseId } from './ids.js';
import { translatePrismaError } from '../errors/prisma.js';
import { LIST_MAX, type Window } from './users.js';
import { storedAsIs } from './storage-mapping.js';
import { countedRows } from '../collections/row-counts.js';
import { validateInput, type ContractInput, type Unvalidated } from './validation.js';

/** A new post: the contract's CreatePostInput, and its author (a path parameter on REST, an argument on GraphQL). */
export type NewPost = Unvalidated<ContractInput<'CreatePostInput'>> & { authorId: string | number };

export interface PostsConnection {
  posts: Post[];
  cursors: string[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  /** Counted only when asked (GraphQL resolves `totalCount` only when it is selected). */
  totalCount: () => Promise<number>;
}

/** The most posts `User.posts` returns per user (the oldest ones; documented in schema.graphql). */
export const POSTS_PER_AUTHOR_MAX = 100;

/** SPEC §4 allow-list for sorting posts. */
/** The allow-list of openapi.yaml (`PostSortField`, whose forms `sort` and `sortBy` enumerate): one source for both doors. */
export const POST_SORT_FIELDS = ENUM_VALUES.PostSortField;
export type PostSortField = (typeof POST_SORT_FIELDS)[number];

function pageSize(value: number, field: string): number {
  if (!Number.isInteger(value) || value < 1 || value > MAX_PAGE) {
    throw new AppError('VALIDATION_FAILED', 'Invalid arguments', [{ field, message: `must be between 1 and ${MAX_PAGE}` }]);
  }
  return value;
}

/** Connection cursors share the keyset cursor format of the REST collections, bound to the connection (SPEC §4). */
const CONNECTION_SCOPE = { collection: 'Query.postsConnection', field: 'id', direction: 'asc', filters: null } as const;
const postCursor = (post: Post) => encodeCursor(CONNECTION_SCOPE, post.id, post.id);

/** Every column of `posts` under the model's field names, for the hot reads through the SQL reader (see PUBLIC_USER_COLUMNS in users.ts). */
export const POST_COLUMNS = 'id, title, content, author_id AS "authorId", created_at AS "createdAt", updated_at AS "updatedAt", version';

/** The post fields a reader may ask for by name (listByAuthors), each with its column; `id` and `authorId` always come. */
const POST_FIELD_COLUMNS = {
  title: 'title',
  content: 'content',
  createdAt: 'created_at AS "createdAt"',
  updatedAt: 'updated_at AS "updatedAt"',
} as const;
export type PostReadableField = keyof typeof POST_FIELD_COLUMNS;
export const isPostReadableField = (name: string): name is PostReadableField => Object.hasOwn(POST_FIELD_COLUMNS, name);
/** A post with the fields read: `id` and `authorId`, and those asked for. */
export type PostRow<F extends PostReadableField = PostReadableField> = Pick<Post, 'id' | 'authorId' | F>;

/** The posts collection for the pager: its sortable, filterable and searchable fields as columns. */
const POSTS_PAGE: PageSource<PostSortField | 'authorId' | 'content'> = {
  collection: 'posts',
  table: 'posts',
  counted: 'posts',
  columns: POST_COLUMNS,
  fields: {
    id: ID_FIELD,
    title: { column: 'title', kind: 'string' },
    content: { column: 'content', kind: 'string' },
    authorId: { column: 'author_id', kind: 'integer' },
    createdAt: CREATED_AT_FIELD,
  },
  // The trigram index of the search (migration 20261127130853_posts_search_index).
  searchText: { fields: ['title', 'content'], expression: `(title || ' ' || content)` },
};

export class PostsService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly sql: SqlReader,
    private readonly events: EventBus,
    private readonly limits: CollectionLimits = DEFAULT_COLLECTION_LIMITS,
  ) {}

  /** Posts in id order; without a `limit`, every post up to LIST_MAX (SPEC §2: the work of one request is bounded). */
  list(window: Window = {}): Promise<Post[]> {
    return this.sql.rows<Post>(
      `SELECT ${POST_COLUMNS} FROM posts ORDER BY id LIMIT $1 OFFSET $2`,
      [window.limit ?? LIST_MAX, window.offset ?? 0],
      PREPARED,
    );
  }

  /** One page of posts by the collection conventions (filter by author, search over title and content). */
  page(query: CollectionQuery<PostSortField>, filter: { authorId?: number | undefined } = {}): Promise<PageResult<Post>> {
    return findPage(this.sql, POSTS_PAGE, query, { equal: { authorId: filter.authorId }, searchIn: ['title', 'content'] }, this.limits);
  }

  async get(id: string | number): Promise<Post | null> {
    const dbId = parseId(id);
    if (dbId === null) return null;
    const [post] = await this.sql.rows<Post>(`SELECT ${POST_COLUMNS} FROM posts WHERE id = $1`, [dbId], PREPARED);
    return post ?? null;
  }

  /** The newest posts first (ties by id). */
  recent(limit: number): Promise<Post[]> {
    return this.prisma.post.findMany({ orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: pageSize(limit, 'limit') });
  }

  /**
   * A Relay connection's page, in id order after an opaque cursor (`postsConnection`). Each part costs a page whatever
   * the table's size: the page is an index range, `hasPreviousPage` asks whether one post lies at or before the cursor
   * (not how many), and `totalCount` is read only when the query selects it, from the counters the writes keep.
   */
  async connection(first: number, after: string | null | undefined): Promise<PostsConnection> {
    const take = pageSize(first, 'first');
    let afterId = 0;
    if (after) {
      try {
        afterId = decodeCursor(after, CONNECTION_SCOPE, { parameter: 'after' }).id;
      } catch {
        throw new AppError('VALIDATION_FAILED', 'Invalid cursor', [{ field: 'after', message: 'is not a cursor of this connection' }]);
      }
    }
    const [rows, before] = await Promise.all([
      this.sql.rows<Post>(`SELECT ${POST_COLUMNS} FROM posts WHERE id > $1 ORDER BY id LIMIT $2`, [afterId, take + 1], PREPARED),
      after
        ? this.sql.rows<{ found: boolean }>(`SELECT EXISTS (SELECT 1 FROM posts WHERE id <= $1) AS found`, [afterId], PREPARED)
        : Promise.resolve([{ found: false }]),
    ]);
    const posts = rows.slice(0, take);
    return {
      posts,
      cursors: posts.map(postCursor),
      hasNextPage: rows.length > take,
      hasPreviousPage: before[0]?.found ?? false,
      totalCount: () => this.count(),
    };
  }

  /** Writes a post as `principal` (the author itself, or an ADMIN for anyone) and emits postCreated. */
  async create(principal: Principal, input: NewPost): Promise<Post> {
    const caller = requireAuthenticated(principal);
    const { authorId: author, ...fields } = input;
    const authorId = parseId(author);
    if (authorId === null || !canActFor(caller, authorId)) {
      if (caller.role !== 'ADMIN') throw new AppError('FORBIDDEN', 'You may only write posts as yourself');
      throw new AppError('NOT_FOUND', 'Author not found');
    }
    validateInput('CreatePostInput', fields);
    let post: Post;
    try {
      post = await this.prisma.post.create({ data: { ...storedAsIs('Post', fields), authorId } });
    } catch (error) {
      translatePrismaError(error, { foreignKey: 'Author not found' });
    }
    this.events.publish('postCreated', post);
    return post;
  }

  /**
   * The first POSTS_PER_AUTHOR_MAX posts of each author, oldest first, in the order asked (DataLoader batch function).
   * One statement per batch: the per-author cap is a LATERAL join with a LIMIT, which Prisma's query API cannot express.
   * `fields`: the post fields the caller reads (GraphQL's selection); only their columns are read, with `id` and
   * `authorId` always (a nested `posts { title }` of 50 authors need not read 500 contents and 1 000 timestamps).
   */
  async listByAuthors<F extends PostReadableField = PostReadableField>(authorIds: readonly number[], fields?: readonly F[]): Promise<PostRow<F>[][]> {
    const columns = fields ? ['id', 'author_id AS "authorId"', ...fields.map((field) => POST_FIELD_COLUMNS[field])].join(', ') : POST_COLUMNS;
    const rows = await this.sql.rows<PostRow<F>>(
      `SELECT post.* FROM unnest($1::int[]) AS author(id)
       CROSS JOIN LATERAL (SELECT ${columns} FROM posts WHERE author_id = author.id ORDER BY id LIMIT $2) AS post
       ORDER BY post.id`,
      [authorIds, POSTS_PER_AUTHOR_MAX],
      PREPARED, // one text per set of fields read: at most 2⁴ of them
    );
    const byAuthor = new Map<number, PostRow<F>[]>(authorIds.map((id) => [id, []]));
    for (const row of rows) byAuthor.get(row.authorId)?.push(row);
    return authorIds.map((id) => byAuthor.get(id) ?? []);
  }

  /** How many posts there are: exact, from the counters the writes keep (O(1)). */
  count(): Promise<number> {
    return countedRows(this.sql, 'posts');
  }
}
