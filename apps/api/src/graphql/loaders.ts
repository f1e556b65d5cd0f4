// Per-request DataLoaders: every relation resolver batches through these (no N+1).
import type { Post, User } from '@users-posts/db';
import DataLoader from 'dataloader';
import type { Services } from '../services/index.js';

export interface Loaders {
  userById: DataLoader<number, User | null>;
  postsByAuthorId: DataLoader<number, Post[]>;
}

export function createLoaders(services: Services): Loaders {
  return {
    userById: new DataLoader((ids) => services.users.getMany(ids)),
    postsByAuthorId: new DataLoader((ids) => services.posts.listByAuthors(ids)),
  };
}
