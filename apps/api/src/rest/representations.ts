// The public JSON shape of each model (SPEC §4): camelCase, numeric ids, ISO timestamps, never secrets.
import type { components } from '@users-posts/contracts';
import type { Comment, Order, Post } from '@users-posts/db';
import type { Principal } from '../auth/principal.js';
import type { PublicUser } from '../services/users.js';
import { asSeenBy } from '../services/visibility.js';

type Schemas = components['schemas'];

/** A user as `viewer` may see it: its private fields (the contract's `x-private`) only for itself, ADMINs and services. */
export function userResource(viewer: Principal): (user: PublicUser) => Schemas['User'] {
  return (user) =>
    asSeenBy(viewer, 'User', user, {
      id: user.id,
      name: user.name,
      email: user.email,
      emailVerified: user.emailVerifiedAt !== null,
      age: user.age,
      role: user.role,
      createdAt: user.createdAt.toISOString(),
      updatedAt: user.updatedAt.toISOString(),
    });
}

export function postResource(post: Post): Schemas['Post'] {
  return {
    id: post.id,
    title: post.title,
    content: post.content,
    authorId: post.authorId,
    createdAt: post.createdAt.toISOString(),
    updatedAt: post.updatedAt.toISOString(),
  };
}

export const POST_FIELDS = ['id', 'title', 'content', 'authorId', 'createdAt', 'updatedAt'] as const;

/** Field names of a user representation, for `fields=` selection. */
export const USER_FIELDS = ['id', 'name', 'email', 'emailVerified', 'age', 'role', 'createdAt', 'updatedAt'] as const;

export function commentResource(comment: Comment): Schemas['Comment'] {
  return {
    id: comment.id,
    body: comment.body,
    postId: comment.postId,
    authorId: comment.authorId,
    createdAt: comment.createdAt.toISOString(),
  };
}

/** Field names of a comment representation, for `fields=` selection. */
export const COMMENT_FIELDS = ['id', 'body', 'postId', 'authorId', 'createdAt'] as const;

export function orderResource(order: Order): Schemas['Order'] {
  return {
    id: order.id,
    userId: order.userId,
    product: order.product,
    quantity: order.quantity,
    totalCents: order.totalCents,
    status: order.status,
    createdAt: order.createdAt.toISOString(),
  };
}

/** Field names of an order representation, for `fields=` selection. */
export const ORDER_FIELDS = ['id', 'userId', 'product', 'quantity', 'totalCents', 'status', 'createdAt'] as const;
