// The identity module's services, built once per app and shared by REST handlers, GraphQL and the auth hook.
import type { PrismaClient, User } from '@users-posts/db';
import type { FastifyInstance } from 'fastify';
import { ApiKeyService } from './credentials/api-keys.js';
import type { Clock } from './clock.js';
import { TokenCodec } from './credentials/jwt.js';
import { linkOrCreateUser, linkToUser } from './oauth/accounts.js';
import type { OidcProfile } from './oauth/flow.js';
import { PasswordCredentials } from './credentials/password-login.js';
import { RefreshTokenService } from './credentials/refresh-tokens.js';
import { SignInService } from './credentials/sign-ins.js';
import { AccountTokenService } from './credentials/account-tokens.js';
import { SecurityEvents } from './security-events.js';
import type { KnownLoginStore } from '../shared-state/known-logins/store.js';
import type { NonceStore } from '../shared-state/nonces/store.js';
import type { RevocationStore } from '../shared-state/revocations/store.js';

export interface IdentityStores {
  revocations: RevocationStore;
  nonces: NonceStore;
  /** Where the owner of an account has logged in from (the per-account login guard exempts those addresses). */
  knownLogins: KnownLoginStore;
}

export class Identity {
  readonly tokens: TokenCodec;
  readonly refreshTokens: RefreshTokenService;
  readonly signIns: SignInService;
  readonly apiKeys: ApiKeyService;
  readonly passwords: PasswordCredentials;
  readonly securityEvents: SecurityEvents;
  readonly accountTokens: AccountTokenService;
  /** RECENT_AUTH_MS: how old a login may be for a sensitive change. */
  readonly recentAuthMs: number;

  constructor(
    app: FastifyInstance,
    private readonly prisma: PrismaClient,
    readonly clock: Clock,
    readonly stores: IdentityStores,
    readonly signingSecret: string,
  ) {
    this.recentAuthMs = app.config.recentAuthMs;
    this.tokens = new TokenCodec(app, clock);
    this.signIns = new SignInService(prisma, clock);
    this.securityEvents = new SecurityEvents(prisma, (userId) => this.revoked(userId));
    this.refreshTokens = new RefreshTokenService(prisma, this.tokens, clock, this.signIns, {
      graceMs: app.config.refreshReuseGraceMs,
      onReuse: async (userId) => void (await this.securityEvents.revokeCredentials(userId)),
    });
    this.apiKeys = new ApiKeyService(prisma, clock);
    this.passwords = new PasswordCredentials(prisma);
    this.accountTokens = new AccountTokenService(prisma, clock);
  }

  /**
   * The user an OpenID Connect profile logs in: linked to `linkUserId` when the caller asked to link it, else the
   * account already linked, or a new one (oauth/accounts.ts says when an email may be trusted).
   */
  userFromOAuth(provider: string, profile: OidcProfile, linkUserId?: number): Promise<User> {
    return linkUserId === undefined ? linkOrCreateUser(this.prisma, provider, profile) : linkToUser(this.prisma, provider, profile, linkUserId);
  }

  private readonly revocationListeners = new Set<(userId: number) => void>();

  /** Registers a listener told when credentials of a user are revoked in this process (open WebSockets re-verify). */
  onRevoked(listener: (userId: number) => void): () => void {
    this.revocationListeners.add(listener);
    return () => void this.revocationListeners.delete(listener);
  }

  /** Tells the listeners that credentials of `userId` were revoked (a sign-in ended, a security event). */
  revoked(userId: number): void {
    for (const listener of this.revocationListeners) listener(userId);
  }
}
