// The public JSON shape of each model (SPEC §4): camelCase, numeric ids, ISO timestamps, never secrets.
import type { components } from '@users-posts/contracts';
import type { User } from '@users-posts/db';

type Schemas = components['schemas'];

export function userResource(user: User): Schemas['User'] {
  return {
    id: user.id,
    name: user.name,
    email: user.email,
    age: user.age,
    role: user.role,
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  };
}

/** Field names of a user representation, for `fields=` selection. */
export const USER_FIELDS = ['id', 'name', 'email', 'age', 'role', 'createdAt', 'updatedAt'] as const;
