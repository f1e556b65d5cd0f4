// /api/v1/sessions: the caller's sign-ins (auth/credentials/sign-ins.ts), listed and ended one by one (SPEC §3.2).
import type { components, OperationHandlers } from '@users-posts/contracts';
import { clearSessionCookie } from '../../auth/login.js';
import { requireUser } from '../../auth/principal.js';
import type { SignInRecord } from '../../auth/credentials/sign-ins.js';
import { notFound } from '../../errors/app-error.js';
import type { RestContext } from '../context.js';
import { ok } from '../envelope.js';

const DEFAULT_PAGE_SIZE = 20;

const signInResource =
  (currentId: string | undefined) =>
  (signIn: SignInRecord): components['schemas']['SignIn'] => ({
    id: signIn.id,
    kind: signIn.kind,
    createdAt: signIn.createdAt.toISOString(),
    lastUsedAt: signIn.lastUsedAt.toISOString(),
    userAgent: signIn.userAgent,
    current: signIn.id === currentId,
  });

export const sessionsHandlers = {
  listSessions: async ({ query }, { request }) => {
    const caller = requireUser(request.principal);
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
    const { items, total } = await request.server.identity.signIns.list(caller.userId, { limit: pageSize, offset: (page - 1) * pageSize });
    return { status: 200, body: ok({ items: items.map(signInResource(caller.signInId)), total, page, pageSize }) };
  },

  deleteSession: async ({ params }, { request, reply }) => {
    const caller = requireUser(request.principal);
    const { identity } = request.server;
    if (!(await identity.signIns.end(params.sessionId, caller.userId))) throw notFound('Sign-in');
    identity.revoked(caller.userId); // open WebSockets of this user re-verify now
    if (params.sessionId === caller.signInId && caller.via === 'session') clearSessionCookie(reply);
    return { status: 204, body: undefined };
  },
} satisfies OperationHandlers<RestContext>;
