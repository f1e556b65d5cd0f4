// The posts domain without a door: who may write a post for whom, one postCreated per post written, nothing written or
// published on a refusal, and the Relay connection's paging (a typed scenario on a real test database).
import { describe, expect, it } from '@jest/globals';
import type { Post } from '@users-posts/db';
import { anonymous } from '../auth/principal.js';
import { ErrorKinds } from '../errors/app-error.js';
import { defineScenario, useScenario } from '../../test/support/scenario.js';

const standard = defineScenario({
  users: {
    ada: { name: 'Ada', email: 'ada@example.com' },
    bob: { name: 'Bob', email: 'bob@example.com' },
    root: { name: 'Root', email: 'root@example.com', role: 'ADMIN' },
  },
  posts: {
    first: { title: 'First', content: 'Hello', author: 'ada' },
    second: { title: 'Second', content: 'Again', author: 'ada' },
    third: { title: 'Third', content: 'Bob here', author: 'bob' },
  },
});

const scenario = useScenario(standard);

/** The posts published on the bus while `run` runs (the in-memory bus delivers before `publish` returns). */
async function publishedWhile(run: () => Promise<unknown>): Promise<{ outcome: PromiseSettledResult<unknown>; events: Post[] }> {
  const events: Post[] = [];
  const subscription = scenario.services.events.subscribe('postCreated')[Symbol.asyncIterator]();
  const reading = (async () => {
    for (let next = await subscription.next(); !next.done; next = await subscription.next()) events.push(next.value);
  })();
  const [outcome] = await Promise.allSettled([run()]);
  await new Promise((resolve) => setImmediate(resolve));
  await subscription.return?.();
  await reading;
  return { outcome: outcome!, events };
}

const postCount = () => scenario.db.prisma.post.count();

describe('PostsService.create', () => {
  it('writes a post for its caller and publishes it once', async () => {
    const { outcome, events } = await publishedWhile(() =>
      scenario.services.posts.create(scenario.as('bob'), { title: 'New', content: 'Body', authorId: scenario.users.bob.id }),
    );
    expect(outcome.status).toBe('fulfilled');
    const post = (outcome as PromiseFulfilledResult<Post>).value;
    expect(post).toMatchObject({ title: 'New', content: 'Body', authorId: scenario.users.bob.id });
    expect(events.map((event) => event.id)).toEqual([post.id]);
  });

  it.each([
    ['a USER writing as another user', () => scenario.as('ada'), () => scenario.users.bob.id, ErrorKinds.FORBIDDEN],
    ['an anonymous caller', () => anonymous, () => scenario.users.ada.id, ErrorKinds.UNAUTHENTICATED],
    ['an ADMIN naming an author that does not exist', () => scenario.as('root'), () => 2_000_000_000, ErrorKinds.NOT_FOUND],
    ['an author id that cannot exist', () => scenario.as('root'), () => 'abc', ErrorKinds.NOT_FOUND],
  ])('refuses %s: nothing written, nothing published', async (_case, caller, authorId, kind) => {
    const before = await postCount();
    const { outcome, events } = await publishedWhile(() =>
      scenario.services.posts.create(caller(), { title: 'T', content: 'C', authorId: authorId() }),
    );
    expect(outcome).toMatchObject({ status: 'rejected', reason: { kind } });
    expect(events).toEqual([]);
    expect(await postCount()).toBe(before);
  });

  it('refuses an empty title naming it (422), before writing anything', async () => {
    const before = await postCount();
    const { outcome, events } = await publishedWhile(() =>
      scenario.services.posts.create(scenario.as('ada'), { title: '  ', content: 'C', authorId: scenario.users.ada.id }),
    );
    expect(outcome).toMatchObject({
      status: 'rejected',
      reason: { kind: ErrorKinds.VALIDATION_FAILED, fields: [{ field: 'title', message: 'must match pattern "\\S"' }] },
    });
    expect(events).toEqual([]);
    expect(await postCount()).toBe(before);
  });

  it('lets an ADMIN write for another user', async () => {
    const post = await scenario.services.posts.create(scenario.as('root'), { title: 'By root', content: 'For Ada', authorId: scenario.users.ada.id });
    expect(post.authorId).toBe(scenario.users.ada.id);
  });
});

describe('PostsService reads', () => {
  it('gets a post by id, and null for an unknown or impossible id', async () => {
    expect(await scenario.services.posts.get(scenario.posts.third.id)).toMatchObject({ title: 'Third', authorId: scenario.users.bob.id });
    expect(await scenario.services.posts.get(2_000_000_000)).toBeNull();
    expect(await scenario.services.posts.get('abc')).toBeNull();
  });

  it('pages the Relay connection in id order: every post once, and a cursor of its own only', async () => {
    const seen: number[] = [];
    let after: string | null = null;
    for (;;) {
      const page = await scenario.services.posts.connection(2, after);
      seen.push(...page.posts.map((post) => post.id));
      expect(page.hasPreviousPage).toBe(after !== null);
      if (!page.hasNextPage) break;
      after = page.cursors.at(-1)!;
    }
    const all = await scenario.db.prisma.post.findMany({ orderBy: { id: 'asc' }, select: { id: true } });
    expect(seen).toEqual(all.map((post) => post.id));
    await expect(scenario.services.posts.connection(2, 'not-a-cursor')).rejects.toMatchObject({
      kind: ErrorKinds.VALIDATION_FAILED,
      fields: [{ field: 'after' }],
    });
  });
});
