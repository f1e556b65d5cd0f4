// The REST operation table: every operationId of openapi.yaml maps to its typed handler (checked at start and by contracts:check).
import type { OperationHandlers } from '@users-posts/contracts';
import type { RestContext } from './context.js';
import { accountHandlers } from './routes/account.js';
import { apiKeysHandlers } from './routes/api-keys.js';
import { authHandlers } from './routes/auth.js';
import { commentsHandlers } from './routes/comments.js';
import { healthHandlers } from './routes/health.js';
import { oauthHandlers } from './routes/oauth.js';
import { oauthLinksHandlers } from './routes/oauth-links.js';
import { ordersHandlers } from './routes/orders.js';
import { postsHandlers } from './routes/posts.js';
import { sessionsHandlers } from './routes/sessions.js';
import { userPostsHandlers } from './routes/user-posts.js';
import { usersHandlers } from './routes/users.js';

export const operationHandlers: OperationHandlers<RestContext> = {
  ...healthHandlers,
  ...authHandlers,
  ...oauthHandlers,
  ...accountHandlers,
  ...sessionsHandlers,
  ...oauthLinksHandlers,
  ...apiKeysHandlers,
  ...usersHandlers,
  ...userPostsHandlers,
  ...postsHandlers,
  ...commentsHandlers,
  ...ordersHandlers,
};
