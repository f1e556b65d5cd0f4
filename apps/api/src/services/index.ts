// The domain layer: one set of services per app, called by both REST handlers and GraphQL resolvers.
import type { Database } from '@users-posts/db';
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
}

/** The services on `db`: its Prisma client, and its SQL reader for the hot reads (by id, pages, relations). */
export function createServices(db: Pick<Database, 'prisma' | 'sql'>, events: EventBus = createMemoryEventBus()): Services {
  const { prisma, sql } = db;
  return {
    users: new UsersService(prisma, sql),
    posts: new PostsService(prisma, sql, events),
    comments: new CommentsService(prisma, sql),
    orders: new OrdersService(prisma, sql),
    events,
  };
}
