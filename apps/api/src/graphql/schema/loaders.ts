// Per-request DataLoaders: every relation resolver batches through these (no N+1).
import DataLoader from 'dataloader';
import type { PostReadableField, PostRow } from '../../services/posts.js';
import type { Services } from '../../services/index.js';
import type { PublicUser } from '../../services/users.js';

export interface Loaders {
  userById: DataLoader<number, PublicUser | null>;
  /** Users this request already read (primed by a list): answered at once, not through a promise per lookup. */
  knownUsers: Map<number, PublicUser>;
  /** Posts by author, one loader per set of fields read (each batch reads only those columns: services/posts.ts). */
  postsByAuthorId: (fields: readonly PostReadableField[]) => DataLoader<number, PostRow[]>;
}

export function createLoaders(services: Services): Loaders {
  // bound: per request (one set of loaders per operation), keyed by the selections of its document
  const postLoaders = new Map<string, DataLoader<number, PostRow[]>>();
  return {
    userById: new DataLoader((ids) => services.users.getMany(ids)),
    knownUsers: new Map(),
    postsByAuthorId: (fields) => {
      const key = fields.join();
      let loader = postLoaders.get(key);
      if (!loader) postLoaders.set(key, (loader = new DataLoader((ids) => services.posts.listByAuthors(ids, fields))));
      return loader;
    },
  };
}

/** Remembers users read as a list, so that lookups of them (a nested `author`) need neither a statement nor a promise. */
export function rememberUsers(loaders: Loaders, users: readonly PublicUser[]): void {
  for (const user of users) {
    loaders.knownUsers.set(user.id, user);
    loaders.userById.prime(user.id, user);
  }
}

/** A user by id: the user itself when this request already read it, else through the batching loader. */
export function userById(loaders: Loaders, id: number): PublicUser | null | Promise<PublicUser | null> {
  return loaders.knownUsers.get(id) ?? loaders.userById.load(id);
}
