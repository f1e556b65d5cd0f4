// The domain layer: one set of services per app, called by both REST handlers and GraphQL resolvers.
import type { Database } from '@users-posts/db';
import type { AccountHooks } from '../auth/account-lifecycle.js';
import { DEFAULT_COLLECTION_LIMITS, type CollectionLimits } from '../config/collection-limits.js';
import { CommentsService } from './comments.js';
import type { EventBus } from '../shared-state/events/bus.js';
import { createMemoryEventBus } from '../shared-state/events/memory.js';
import { OrdersService } from './orders.js';
import { PostsService } from './posts.js';
import { UsersService } from './users.js';

export interface Services {
  users: UsersService;
  posts: PostsService;
  comments: CommentsService;
  orders: OrdersService;
  events: EventBus;
  /** How deep and how exactly the listings of both doors page (MAX_OFFSET, EXACT_COUNT_LIMIT). */
  limits: CollectionLimits;
}

/** The services on `db`: its Prisma client, and its SQL reader for the hot reads (by id, pages, relations). */
export function createServices(
  db: Pick<Database, 'prisma' | 'sql'>,
  events: EventBus = createMemoryEventBus(),
  limits: CollectionLimits = DEFAULT_COLLECTION_LIMITS,
  /** What follows a sign-up or a change of e-mail (the account lifecycle's mail); none in service tests. */
  accountHooks?: AccountHooks,
): Services {
  const { prisma, sql } = db;
  return {
    users: new UsersService(prisma, sql, events, limits, accountHooks),
    posts: new PostsService(prisma, sql, events, limits),
    comments: new CommentsService(prisma, sql, limits),
    orders: new OrdersService(prisma, sql, limits),
    events,
    limits,
  };
}
