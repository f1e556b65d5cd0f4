// The domain layer: one set of services per app, called by both REST handlers and GraphQL resolvers.
import type { PrismaClient } from '@users-posts/db';
import { CommentsService } from './comments.js';
import { createEventBus, type EventBus } from './events.js';
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

export function createServices(prisma: PrismaClient, events: EventBus = createEventBus()): Services {
  return {
    users: new UsersService(prisma),
    posts: new PostsService(prisma, events),
    comments: new CommentsService(prisma),
    orders: new OrdersService(prisma),
    events,
  };
}
