// `pnpm db:seed`: demo users, posts, comments and orders, in one transaction (all or nothing), idempotent.
// Uses the same database the server would (DATABASE_URL, else PGLITE_DIR / ./.data/pglite). On the embedded PGlite the
// data directory is owned by one process: while the server runs, the seed is refused at once (naming the server's
// pid) instead of writing behind its back.
// Idempotent: a demo user whose e-mail exists is left as it is (with whatever posts it has); only the missing ones
// are created, so a second run changes nothing and says so.
import { createDatabase, databaseOptionsFromEnv, DirectoryLockedError, type Prisma } from '@users-posts/db';
import { hashPassword } from '../apps/api/src/auth/credentials/passwords.js';

const DEMO_PASSWORD = 'demo-password';
const people = [
  { name: 'Ada Lovelace', email: 'ada@example.com', age: 36, role: 'ADMIN' as const },
  { name: 'Alan Turing', email: 'alan@example.com', age: 41, role: 'USER' as const },
  { name: 'Grace Hopper', email: 'grace@example.com', age: 85, role: 'USER' as const },
  { name: 'Edsger Dijkstra', email: 'edsger@example.com', age: null, role: 'USER' as const },
];

/** Creates the demo people that are missing; returns the e-mails created. */
async function seed(tx: Prisma.TransactionClient, passwordHash: string): Promise<string[]> {
  const created: string[] = [];
  for (const [index, person] of people.entries()) {
    if (await tx.user.findUnique({ where: { email: person.email } })) continue;
    const user = await tx.user.create({ data: { ...person, passwordHash } });
    for (let n = 1; n <= 3; n++) {
      const post = await tx.post.create({
        data: { title: `${person.name.split(' ')[0]}'s note ${n}`, content: `Thoughts number ${n} of ${person.name}.`, authorId: user.id },
      });
      await tx.comment.create({ data: { body: `A reply to "${post.title}".`, postId: post.id, authorId: user.id } });
    }
    await tx.order.create({ data: { userId: user.id, product: 'Notebook', quantity: index + 1, totalCents: 1250 * (index + 1), status: 'paid' } });
    created.push(person.email);
  }
  return created;
}

async function main(): Promise<void> {
  const database = await createDatabase({ ...databaseOptionsFromEnv(), migrate: true });
  const { prisma } = database;
  try {
    const passwordHash = await hashPassword(DEMO_PASSWORD); // outside the transaction: it is slow on purpose
    // One transaction: a failure half-way (a constraint, a crash) leaves the database as it was.
    const created = await prisma.$transaction((tx) => seed(tx, passwordHash), { timeout: 60_000, maxWait: 10_000 });
    const [users, posts, comments, orders] = await Promise.all([
      prisma.user.count(),
      prisma.post.count(),
      prisma.comment.count(),
      prisma.order.count(),
    ]);
    const totals = `${users} users, ${posts} posts, ${comments} comments, ${orders} orders`;
    if (created.length === 0) console.log(`already seeded: nothing changed (${totals})`);
    else console.log(`seeded ${created.length} demo users (${created.join(', ')}): now ${totals} (password of every demo user: ${DEMO_PASSWORD})`);
  } finally {
    await database.close();
  }
}

try {
  await main();
} catch (error) {
  // The expected refusals are one clear line, not a stack trace; the exit code says it failed.
  console.error(error instanceof DirectoryLockedError ? error.message : error);
  if (!(error instanceof DirectoryLockedError)) console.error('seed failed: its writes were rolled back (it runs in one transaction)');
  process.exitCode = 1;
}
