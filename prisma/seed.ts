// `pnpm db:seed`: demo users, posts, comments and orders (idempotent: users are matched by e-mail).
// Uses the same database the server would (DATABASE_URL, else PGLITE_DIR / ./.data/pglite); stop the server first
// when it runs on the embedded PGlite, which one process opens at a time.
import { createDatabase, databaseOptionsFromEnv } from '@users-posts/db';
import { hashPassword } from '../apps/api/src/auth/passwords.js';

const DEMO_PASSWORD = 'demo-password';
const people = [
  { name: 'Ada Lovelace', email: 'ada@example.com', age: 36, role: 'ADMIN' as const },
  { name: 'Alan Turing', email: 'alan@example.com', age: 41, role: 'USER' as const },
  { name: 'Grace Hopper', email: 'grace@example.com', age: 85, role: 'USER' as const },
  { name: 'Edsger Dijkstra', email: 'edsger@example.com', age: null, role: 'USER' as const },
];

const database = await createDatabase({ ...databaseOptionsFromEnv(), migrate: true });
const { prisma } = database;
try {
  const passwordHash = await hashPassword(DEMO_PASSWORD);
  for (const [index, person] of people.entries()) {
    const existing = await prisma.user.findUnique({ where: { email: person.email } });
    if (existing) continue;
    const user = await prisma.user.create({ data: { ...person, passwordHash } });
    for (let n = 1; n <= 3; n++) {
      const post = await prisma.post.create({
        data: { title: `${person.name.split(' ')[0]}'s note ${n}`, content: `Thoughts number ${n} of ${person.name}.`, authorId: user.id },
      });
      await prisma.comment.create({ data: { body: `A reply to "${post.title}".`, postId: post.id, authorId: user.id } });
    }
    await prisma.order.create({
      data: { userId: user.id, product: 'Notebook', quantity: index + 1, totalCents: 1250 * (index + 1), status: 'paid' },
    });
  }
  const [users, posts, comments, orders] = await Promise.all([prisma.user.count(), prisma.post.count(), prisma.comment.count(), prisma.order.count()]);
  console.log(`seeded: ${users} users, ${posts} posts, ${comments} comments, ${orders} orders (password of every demo user: ${DEMO_PASSWORD})`);
} finally {
  await database.close();
}
