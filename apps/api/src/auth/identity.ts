// The identity module's services, built once per app and shared by REST handlers, GraphQL and the auth hook.
import { declareCredentialStores } from './credential-stores.js';
import type { PrismaClient, User } from '@users-posts/db';
import type { FastifyInstance } from 'fastify';
import { ApiKeyService } from './credentials/api-keys.js';
import type { Clock } from './clock.js';
import { TokenCodec } from './credentials/jwt.js';
import { linkOrCreateUser, type SignUpRules } from './oauth/accounts.js';
import type { OidcProfile } from './oauth/flow.js';
import { OAuthLinks } from './oauth/links.js';
import type { LinkBinding } from './oauth/transaction.js';
import { PasswordCredentials } from './credentials/password-login.js';
import { RefreshTokenService } from './credentials/refresh-tokens.js';
import { SignInService } from './credentials/sign-ins.js';
import { AccountTokenService } from './credentials/account-tokens.js';
import { SecurityEvents } from './security-events.js';
import { AccessChanges } from './access-changes.js';
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
  /** The OpenID identities linked to accounts: the link flow, and their owner's list and removal. */
  readonly oauthLinks: OAuthLinks;
  /** RECENT_AUTH_MS: how old a login may be for a sensitive change. */
  readonly recentAuthMs: number;
  /** Announces, on every instance, whose open WebSockets and SSE streams must authorize again. */
  readonly access: AccessChanges;

  constructor(
    app: FastifyInstance,
    private readonly prisma: PrismaClient,
    readonly clock: Clock,
    readonly stores: IdentityStores,
    readonly signingSecret: string,
  ) {
    this.recentAuthMs = app.config.recentAuthMs;
    this.access = new AccessChanges(app.sharedState.events);
    this.tokens = new TokenCodec(app, clock);
    this.signIns = new SignInService(prisma, clock, app.config.storeBounds.signInsPerUser);
    this.securityEvents = new SecurityEvents(prisma, (userId) => this.revoked(userId));
    this.refreshTokens = new RefreshTokenService(prisma, this.tokens, clock, this.signIns, {
      graceMs: app.config.refreshReuseGraceMs,
      keptPerSignIn: app.config.storeBounds.refreshTokensPerSignIn,
      onReuse: async (userId) => void (await this.securityEvents.revokeCredentials(userId)),
    });
    this.apiKeys = new ApiKeyService(prisma, clock, (userId) => this.revoked(userId));
    this.passwords = new PasswordCredentials(prisma);
    this.accountTokens = new AccountTokenService(prisma, clock);
    this.oauthLinks = new OAuthLinks(prisma, clock, this.recentAuthMs);
    declareCredentialStores(app, prisma);
  }

  /**
   * The user an OpenID Connect profile logs in: linked to the user of `link` when a signed-in user asked to link it
   * (oauth/links.ts), else the account already linked, or an existing one whose address may be trusted, or a new one
   * made under `signUp`, the rules of every sign-up (oauth/accounts.ts).
   */
  userFromOAuth(provider: string, profile: OidcProfile, options: { link?: LinkBinding | undefined; signUp: SignUpRules }): Promise<User> {
    return options.link ? this.oauthLinks.link(provider, profile, options.link) : linkOrCreateUser(this.prisma, provider, profile, options.signUp);
  }

  /** Credentials of `userId` were revoked (a sign-in ended, a security event): its open streams authorize again. */
  revoked(userId: number): void {
    this.access.changed(userId);
  }
}
