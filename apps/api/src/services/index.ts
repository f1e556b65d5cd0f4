// The domain layer: one set of services per app, called by both REST handlers and GraphQL resolvers.
import type { PrismaClient } from '@users-posts/db';
import { createEventBus, type EventBus } from './events.js';
import { PostsService } from './posts.js';
import { UsersService } from './users.js';

export interface Services {
  users: UsersService;
  posts: PostsService;
  events: EventBus;
}

export function createServices(prisma: PrismaClient, events: EventBus = createEventBus()): Services {
  return { users: new UsersService(prisma), posts: new PostsService(prisma, events), events };
}
