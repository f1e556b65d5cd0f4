// The posts domain: reads and writes of posts, shared by the REST and GraphQL doors.
import type { Post, PrismaClient } from '@users-posts/db';
import { parseId } from './ids.js';
import type { Window } from './users.js';

export class PostsService {
  constructor(private readonly prisma: PrismaClient) {}

  /** Posts in id order; every post when no window is given. */
  list(window: Window = {}): Promise<Post[]> {
    return this.prisma.post.findMany({ orderBy: { id: 'asc' }, take: window.limit, skip: window.offset });
  }

  async get(id: string | number): Promise<Post | null> {
    const dbId = parseId(id);
    return dbId === null ? null : this.prisma.post.findUnique({ where: { id: dbId } });
  }

  /** Posts of each author, oldest first, in the order asked (DataLoader batch function). */
  async listByAuthors(authorIds: readonly number[]): Promise<Post[][]> {
    const rows = await this.prisma.post.findMany({
      where: { authorId: { in: [...authorIds] } },
      orderBy: { id: 'asc' },
    });
    const byAuthor = new Map<number, Post[]>(authorIds.map((id) => [id, []]));
    for (const row of rows) byAuthor.get(row.authorId)?.push(row);
    return authorIds.map((id) => byAuthor.get(id) ?? []);
  }

  count(): Promise<number> {
    return this.prisma.post.count();
  }
}
