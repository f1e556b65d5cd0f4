// The REST operation table: every operationId of openapi.yaml maps to a typed handler, or is listed as pending.
import type { OperationHandlers, OperationId } from '@users-posts/contracts';
import type { RestContext } from './context.js';
import { apiKeysHandlers } from './routes/api-keys.js';
import { authHandlers } from './routes/auth.js';
import { commentsHandlers } from './routes/comments.js';
import { healthHandlers } from './routes/health.js';
import { oauthHandlers } from './routes/oauth.js';
import { ordersHandlers } from './routes/orders.js';
import { postsHandlers } from './routes/posts.js';
import { userPostsHandlers } from './routes/user-posts.js';
import { usersHandlers } from './routes/users.js';

export const operationHandlers: OperationHandlers<RestContext> = {
  ...healthHandlers,
  ...authHandlers,
  ...oauthHandlers,
  ...apiKeysHandlers,
  ...usersHandlers,
  ...userPostsHandlers,
  ...postsHandlers,
  ...commentsHandlers,
  ...ordersHandlers,
};

/**
 * Operations of the contract not implemented yet: they answer 501 in the error envelope.
 * `pnpm contracts:check` fails when an operation is neither implemented nor listed here,
 * or listed here although implemented. Later issues empty this list.
 */
export const pendingOperations: readonly OperationId[] = [
  // REST resources (issue 5)
];
