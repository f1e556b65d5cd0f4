// Service tests with typed scenarios, as Redwood's `defineScenario`: named rows seeded into a fresh test database
// before a suite, handed to its tests by name, with the domain services over that database (no HTTP, no app).
import { afterAll, beforeAll } from '@jest/globals';
import type { Database, Post, Prisma, User } from '@users-posts/db';
import { createTestDatabase } from '@users-posts/db/testing';
import type { Principal } from '../../src/auth/principal.js';
import { createServices, type Services } from '../../src/services/index.js';

/** Rows by name: users first, then posts naming their author by the user's name in the scenario. */
export interface ScenarioDefinition<UserName extends string, PostName extends string> {
  users: Record<UserName, Omit<Prisma.UserCreateInput, 'posts' | 'comments' | 'orders'>>;
  posts?: Record<PostName, Omit<Prisma.PostUncheckedCreateInput, 'authorId'> & { author: NoInfer<UserName> }>;
}

export interface Scenario<UserName extends string, PostName extends string> {
  services: Services;
  db: Database;
  users: Record<UserName, User>;
  posts: Record<PostName, Post>;
  /** The principal of a scenario user, as a Bearer token of theirs would resolve. */
  as(user: UserName): Principal;
}

/** Types a scenario once, so that every test names its rows with the compiler's help. */
export function defineScenario<UserName extends string, PostName extends string = never>(
  definition: ScenarioDefinition<UserName, PostName>,
): ScenarioDefinition<UserName, PostName> {
  return definition;
}

/**
 * The suite's scenario: a fresh database (a PGlite copy, or a schema of DATABASE_URL's server) seeded with the
 * definition's rows before the suite, closed after it. Read the members inside tests and hooks.
 */
export function useScenario<UserName extends string, PostName extends string>(
  definition: ScenarioDefinition<UserName, PostName>,
): Scenario<UserName, PostName> {
  const scenario = {
    users: {} as Record<UserName, User>,
    posts: {} as Record<PostName, Post>,
    as(name: UserName): Principal {
      const user = scenario.users[name];
      return { kind: 'user', userId: user.id, role: user.role, via: 'bearer', recentLogin: true };
    },
  } as Scenario<UserName, PostName>;
  beforeAll(async () => {
    scenario.db = await createTestDatabase();
    scenario.services = createServices(scenario.db);
    for (const [name, data] of Object.entries(definition.users) as [UserName, Prisma.UserCreateInput][]) {
      scenario.users[name] = await scenario.db.prisma.user.create({ data });
    }
    type PostRow = Omit<Prisma.PostUncheckedCreateInput, 'authorId'> & { author: UserName };
    for (const [name, { author, ...data }] of Object.entries(definition.posts ?? {}) as [PostName, PostRow][]) {
      scenario.posts[name] = await scenario.db.prisma.post.create({ data: { ...data, authorId: scenario.users[author].id } });
    }
  });
  afterAll(() => scenario.db?.close());
  return scenario;
}
