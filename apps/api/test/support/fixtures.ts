// Test data written straight through Prisma, so each test starts from rows it knows.
import type { PrismaClient } from '@users-posts/db';

export interface Fixture {
  users: { id: number; name: string; email: string; age: number | null }[];
  posts: { id: number; title: string; authorId: number }[];
}

/** `userCount` users (ages cycling, one without), each with `postsPerUser` posts. */
export async function seedUsersWithPosts(prisma: PrismaClient, userCount: number, postsPerUser: number): Promise<Fixture> {
  const fixture: Fixture = { users: [], posts: [] };
  for (let i = 1; i <= userCount; i++) {
    const user = await prisma.user.create({
      data: {
        name: `User ${String(i).padStart(3, '0')}`,
        email: `user${i}@example.com`,
        age: i % 5 === 0 ? null : 20 + (i % 7),
        role: i === 1 ? 'ADMIN' : 'USER',
        posts: { create: Array.from({ length: postsPerUser }, (_, j) => ({ title: `Post ${i}.${j + 1}`, content: `Body of post ${i}.${j + 1}` })) },
      },
      include: { posts: true },
    });
    fixture.users.push({ id: user.id, name: user.name, email: user.email, age: user.age });
    fixture.posts.push(...user.posts.map((post) => ({ id: post.id, title: post.title, authorId: post.authorId })));
  }
  return fixture;
}
