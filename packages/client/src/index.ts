// Public surface of @users-posts/client: the REST client typed by the contract's `paths`, the auth layer and a GraphQL helper.
import type { components, paths } from '@users-posts/contracts';
import createOpenApiClient, { type Client } from 'openapi-fetch';
import { AuthSession, type AuthOptions, type TokenPair } from './auth.js';
import { ConditionalCache, type ConditionalOptions } from './conditional.js';
import { createGraphQL, type DocumentTransport, type GraphQLRequest } from './graphql.js';

export { AuthSession, memoryTokenStore } from './auth.js';
export type { AuthOptions, LoggedOutEvent, TokenPair, TokenStore } from './auth.js';
export { gql, sha256Hex } from './graphql.js';
export type { DocumentTransport, GraphQLErrorEntry, GraphQLRequest, GraphQLResult, TypedDocument } from './graphql.js';
export * from './documents.js';

export type { ConditionalOptions } from './conditional.js';

export interface ClientOptions extends AuthOptions {
  /** How GraphQL documents are sent: whole (`text`, the default) or by hash (`hash`, for trusted-documents servers). */
  graphqlDocuments?: DocumentTransport;
  /** ETags: GET answers kept and revalidated (on by default); `conditionalWrites` adds `If-Match` to writes (off). */
  etags?: ConditionalOptions;
}

/**
 * Who the held access token names: its `userId` claim (the server's tokens carry `userId` and `sid`, no `sub`), so that
 * an answer kept for one user is never handed to, or sent as `If-Match` by, another.
 */
function callerOf(session: AuthSession): string {
  const token = session.tokens?.accessToken;
  if (!token) return 'anonymous';
  try {
    const payload = token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/');
    const { userId } = JSON.parse(atob(payload)) as { userId?: unknown };
    return typeof userId === 'number' ? `user:${userId}` : `token:${token}`;
  } catch {
    return `token:${token}`;
  }
}

/** Credentials for the token login (the session-cookie variant is for browsers, not this client). */
export type LoginCredentials = Omit<components['schemas']['LoginInput'], 'session'>;
const postLogin = (rest: Client<paths>, body: LoginCredentials) => rest.POST('/login', { body });
/** The typed answer of `POST /login`: `data` on 200, `error` on 401/422/429…, plus the raw `response`. */
export type LoginResponse = Awaited<ReturnType<typeof postLogin>>;

type Schemas = components['schemas'];

/** The account lifecycle of SPEC §3.2, typed from openapi.yaml: each answers what the server answered. */
function accountFlows(rest: Client<paths>, session: AuthSession) {
  return {
    /** `POST /auth/password`: on success the held pair is replaced by the renewed one (the old access token stops working). */
    async changePassword(body: Schemas['ChangePasswordInput']) {
      const result = await rest.POST('/auth/password', { body });
      if (result.data?.login === 'tokens') session.setTokens({ accessToken: result.data.accessToken, refreshToken: result.data.refreshToken });
      return result;
    },
    /** `POST /auth/password/forgot`: 202 whether or not the address has an account; the link arrives by mail. */
    forgotPassword: (email: string) => rest.POST('/auth/password/forgot', { body: { email } }),
    /** `POST /auth/password/reset` with the token of the mailed link (`#token=…`): 204, then log in with the new password. */
    resetPassword: (body: Schemas['ResetPasswordInput']) => rest.POST('/auth/password/reset', { body }),
    /** `POST /auth/email/verify` with the token of the mailed link. */
    verifyEmail: (token: string) => rest.POST('/auth/email/verify', { body: { token } }),
    /** `POST /auth/email/verify/resend`: a new verification link to the caller's address. */
    resendVerification: () => rest.POST('/auth/email/verify/resend'),
    /** `GET /api/v1/sessions`: the caller's sign-ins, newest first. */
    listSessions: (query: { page?: number; pageSize?: number } = {}) => rest.GET('/api/v1/sessions', { params: { query } }),
    /** `DELETE /api/v1/sessions/{sessionId}`: ends that sign-in at once. */
    endSession: (sessionId: string) => rest.DELETE('/api/v1/sessions/{sessionId}', { params: { path: { sessionId } } }),
  };
}
export type AccountFlows = ReturnType<typeof accountFlows>;

export interface ApiClient {
  /** The openapi-fetch client: `rest.GET('/api/v1/users/{id}', { params: { path: { id } } })`, typed from openapi.yaml. */
  rest: Client<paths>;
  /** Typed GraphQL over `POST /graphql` with the same token handling. */
  graphql: GraphQLRequest;
  auth: {
    /** `POST /login`; on success stores the token pair. Answers what the server answered. */
    login(input: LoginCredentials): Promise<LoginResponse>;
    /** The held pair, or null when logged out. */
    readonly tokens: TokenPair | null;
    setTokens(pair: TokenPair | null): void;
  };
  /** Password change and reset, e-mail verification, sign-ins (SPEC §3.2). */
  account: AccountFlows;
}

/**
 * Creates the typed client. Every REST and GraphQL request carries the held access token; a 401 triggers one
 * `POST /auth/refresh` shared by all requests failing at that moment, which are then repeated once (seed §4.2).
 * A refresh answered 401/403 clears the pair and fires `onLoggedOut`; 409 (rotated by a concurrent request) does not.
 *
 * @example
 * ```ts
 * const api = createApiClient({ baseUrl: 'http://127.0.0.1:3000', onLoggedOut: () => showLogin() });
 * await api.auth.login({ email: 'ada@example.com', password: 'secret-password' });
 * const { data, error } = await api.rest.GET('/api/v1/users/{id}', { params: { path: { id: 1 } } });
 * if (data) console.log(data.data.name);
 * const keys = await api.rest.POST('/api/v1/api-keys', { body: { name: 'ci' } });
 * const me = await api.graphql<{ currentUser: { id: string } }>('{ currentUser { id } }');
 * ```
 */
export function createApiClient(options: ClientOptions): ApiClient {
  // The answers kept for ETags end with the login: on logout, and when a refresh ends it (onLoggedOut).
  const etags = new ConditionalCache(options.etags ?? {}, () => callerOf(session));
  const session = new AuthSession({ ...options, onLoggedOut: (event) => (etags.clear(), options.onLoggedOut?.(event)) });
  const rest = createOpenApiClient<paths>({ baseUrl: options.baseUrl, fetch: etags.fetch(session.fetch) });
  return {
    rest,
    graphql: createGraphQL(options.baseUrl, session.fetch, options.graphqlDocuments),
    auth: {
      async login(input) {
        const result = await postLogin(rest, input);
        if (result.data?.login === 'tokens') {
          etags.clear(); // a new login, maybe another user: nothing kept before it is theirs
          session.setTokens({ accessToken: result.data.accessToken, refreshToken: result.data.refreshToken });
        }
        return result;
      },
      get tokens() {
        return session.tokens;
      },
      setTokens: (pair) => {
        if (!pair) etags.clear();
        session.setTokens(pair);
      },
    },
    account: accountFlows(rest, session),
  };
}
