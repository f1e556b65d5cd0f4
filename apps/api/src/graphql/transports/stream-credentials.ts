// Subscriptions over Server-Sent Events end with the credentials they were opened with (issue 31, item 7), as the
// WebSocket door closes its sockets with 4403 (websocket.ts): when the access token expires, and at once when the user's
// access changes on any instance (a logout, an ended sign-in, a security event, a role change, a deletion:
// auth/access-changes.ts), besides every re-verification interval. Re-verified by the same code as every request
// (auth/authenticate.ts), whose principal then shapes the stream's next events (SPEC §2: a demoted ADMIN's stream stops
// showing other users' e-mails). Signed requests (one nonce each, a service) and anonymous streams are not watched.
import type { Database } from '@users-posts/db';
import type { FastifyRequest } from 'fastify';
import { isAsyncIterable, Repeater, type Plugin } from 'graphql-yoga';
import { authenticate } from '../../auth/authenticate.js';
import type { Identity } from '../../auth/identity.js';
import { AppError } from '../../errors/app-error.js';
import type { GraphQLContext } from '../schema/context.js';

interface Watched {
  request: FastifyRequest;
  /** The stream's context: its principal is replaced by each re-verification's. */
  context: GraphQLContext;
  stop: () => void;
}

export interface StreamCredentials {
  plugin: Plugin;
  /** Stops the periodic re-verification and the revocation listener (the app is closing). */
  close(): void;
}

export function streamCredentials(identity: Identity, db: Database, reverifyIntervalMs = 30_000): StreamCredentials {
  // bound: one per open SSE subscription (SUBSCRIPTIONS_MAX_TOTAL)
  const byUser = new Map<number, Set<Watched>>();

  const reverify = (watched: Watched) => {
    watched.context.authorizing = (async () => {
      try {
        watched.context.principal = await authenticate(watched.request, identity, db);
      } catch (error) {
        if (error instanceof AppError) watched.stop(); // revoked, expired, ended: the stream ends
        // Anything else (the database unreachable): kept until the next check, as the WebSocket door does.
      }
    })();
  };
  const reverifyUser = (userId: number) => {
    for (const watched of byUser.get(userId) ?? []) reverify(watched);
  };
  const stopListening = identity.access.listen(reverifyUser);
  const timer = setInterval(() => {
    for (const userId of byUser.keys()) reverifyUser(userId);
  }, reverifyIntervalMs).unref();

  const plugin: Plugin = {
    onSubscribe: ({ args }) => {
      const context = args.contextValue as unknown as GraphQLContext;
      const { principal, request } = context;
      // Only streams over HTTP (a WebSocket operation has no request: its socket is watched by websocket.ts).
      if (!request || principal.kind !== 'user') return undefined;
      const userId = principal.userId;
      return {
        onSubscribeResult: ({ result, setResult }) => {
          if (!isAsyncIterable(result)) return;
          let expiry: NodeJS.Timeout | undefined;
          const watched: Watched = { request, context, stop: () => undefined };
          const ended = new Repeater<never>(async (_push, stop) => {
            watched.stop = stop;
            const set = byUser.get(userId) ?? new Set<Watched>();
            byUser.set(userId, set.add(watched));
            // An access token ends its stream when it expires (its `exp`, seconds).
            if (principal.token) expiry = setTimeout(stop, Math.max(0, principal.token.exp * 1000 - identity.clock.now())).unref();
            await stop;
            clearTimeout(expiry);
            set.delete(watched);
            if (set.size === 0) byUser.delete(userId);
          });
          setResult(Repeater.race([result, ended]));
        },
      };
    },
  };
  return {
    plugin,
    close() {
      clearInterval(timer);
      stopListening();
    },
  };
}
