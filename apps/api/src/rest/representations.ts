// The public JSON shape of each model (SPEC §4): the contract's own fields (REPRESENTATION_FIELDS, generated from
// openapi.yaml), each read from the row under its own name; camelCase, numeric ids, ISO timestamps, never secrets.
import { REPRESENTATION_FIELDS, type components } from '@users-posts/contracts';
import type { Comment, Order, Post } from '@users-posts/db';
import type { Principal } from '../auth/principal.js';
import { parseId } from '../services/ids.js';
import type { Validator } from '../services/preconditions.js';
import type { PublicUser } from '../services/users.js';
import { asSeenBy, mayReadPrivate } from '../services/visibility.js';

type Schemas = components['schemas'];
type Resource = keyof typeof REPRESENTATION_FIELDS;

/**
 * `resource`'s representation of `row`: every field the contract declares, from `computed` when given there (a field
 * with no column of its name, storage-mapping.ts's COMPUTED_FIELDS), else the row's value of that name, a date as ISO
 * 8601. A property added to the contract is answered with no code here; `RowsCover` below fails the type check, naming
 * it, when the row has no field of that name.
 */
function represent<Name extends Resource>(resource: Name, row: object, computed: Partial<Schemas[Name]> = {}): Schemas[Name] {
  const values = row as Record<string, unknown>;
  const extra = computed as Record<string, unknown>;
  const representation: Record<string, unknown> = {};
  for (const field of REPRESENTATION_FIELDS[resource]) {
    const value = field in extra ? extra[field] : values[field];
    representation[field] = value instanceof Date ? value.toISOString() : value;
  }
  return representation as Schemas[Name];
}

/** The contract fields of `Schema` that neither `Row` holds nor `Computed` supplies: none, or the type check names them. */
type Uncovered<Schema, Row, Computed extends PropertyKey = never> = Exclude<keyof Schema, keyof Row | Computed>;
type None<Fields extends never> = Fields;
export type RowsCover = [
  None<Uncovered<Schemas['User'], PublicUser, 'emailVerified'>>,
  None<Uncovered<Schemas['Post'], Post>>,
  None<Uncovered<Schemas['Comment'], Comment>>,
  None<Uncovered<Schemas['Order'], Order>>,
];

/** A user as `viewer` may see it: its private fields (the contract's `x-private`) only for itself, ADMINs and services. */
export function userResource(viewer: Principal): (user: PublicUser) => Schemas['User'] {
  return (user) => asSeenBy(viewer, 'User', user, represent('User', user, { emailVerified: user.emailVerifiedAt !== null }));
}

/**
 * The validator of the view of `user` that `viewer` is shown (the same rule as `userResource`): the public fields'
 * version for the public view; with the private fields' version for the view that shows them (SPEC §0.1).
 */
export function userValidator(viewer: Principal): (user: PublicUser) => Validator {
  return (user) =>
    mayReadPrivate(viewer, 'User', user) ? { version: user.version, privateVersion: user.privateVersion } : { version: user.version };
}

/** Whether `viewer` is shown the private fields of user `id`: then its If-Match names that view's ETag. */
export function showsPrivateOfUser(viewer: Principal, id: string | number): boolean {
  const dbId = parseId(id);
  return dbId !== null && mayReadPrivate(viewer, 'User', { id: dbId });
}

export const postResource = (post: Post): Schemas['Post'] => represent('Post', post);
export const commentResource = (comment: Comment): Schemas['Comment'] => represent('Comment', comment);
export const orderResource = (order: Order): Schemas['Order'] => represent('Order', order);

/** Field names of each representation, for `fields=` selection. */
export const USER_FIELDS = REPRESENTATION_FIELDS.User;
export const POST_FIELDS = REPRESENTATION_FIELDS.Post;
export const COMMENT_FIELDS = REPRESENTATION_FIELDS.Comment;
export const ORDER_FIELDS = REPRESENTATION_FIELDS.Order;
