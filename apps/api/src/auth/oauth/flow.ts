// The two protocol steps of an OpenID Connect login: the authorization URL (PKCE S256, state, nonce) and the code exchange.
import * as oidc from 'openid-client';
import { AppError, validationFailed } from '../../errors/app-error.js';
import { isStorableText } from '../../contract/text.js';
import { exchangeError } from './errors.js';
import type { OAuthProvider } from './providers.js';
import { OAUTH_TRANSACTION_TTL_SECONDS, type LinkBinding, type OAuthTransaction } from './transaction.js';

const SCOPE = 'openid email profile';

/** Who the provider says logged in. */
export interface OidcProfile {
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
  name: string | undefined;
}

export async function authorizationRequest(
  provider: OAuthProvider,
  options: { session: boolean; now: number; link?: LinkBinding | undefined },
): Promise<{ url: URL; transaction: OAuthTransaction }> {
  const client = await provider.client();
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const transaction: OAuthTransaction = {
    provider: provider.config.name,
    state: oidc.randomState(),
    nonce: oidc.randomNonce(),
    codeVerifier,
    session: options.session,
    ...(options.link === undefined ? {} : { link: options.link }),
    expiresAt: options.now + OAUTH_TRANSACTION_TTL_SECONDS * 1000,
  };
  const url = oidc.buildAuthorizationUrl(client, {
    redirect_uri: provider.config.redirectUri,
    scope: SCOPE,
    state: transaction.state,
    nonce: transaction.nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
  });
  return { url, transaction };
}

const claimString = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() ? value.trim() : undefined);
// Some issuers send `"true"` as a string; anything else (absent, false) is unverified.
const claimTrue = (value: unknown): boolean => value === true || value === 'true';

/**
 * Redeems the code of the provider's redirect (`callbackQuery`, the raw query string) with the stored PKCE verifier,
 * and verifies the response state and the ID token (signature, issuer, audience, expiry, nonce). When the ID token
 * lacks the e-mail, the userinfo endpoint is asked (bound to the same subject).
 */
export async function exchangeCode(provider: OAuthProvider, callbackQuery: string, transaction: OAuthTransaction): Promise<OidcProfile> {
  const client = await provider.client();
  // The URL the provider redirected to: openid-client takes the token request's redirect_uri from it.
  const currentUrl = new URL(provider.config.redirectUri);
  currentUrl.search = callbackQuery;
  try {
    const tokens = await oidc.authorizationCodeGrant(client, currentUrl, {
      pkceCodeVerifier: transaction.codeVerifier,
      expectedState: transaction.state,
      expectedNonce: transaction.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (!claims) throw new AppError('UNAUTHENTICATED', 'The identity provider returned no ID token');
    // The key of the link row: a NUL or a lone surrogate cannot be stored (the database answered 500), so it is refused
    // like any profile claim this service cannot take (the e-mail and name: oauth/accounts.ts).
    if (!isStorableText(claims.sub)) throw validationFailed([{ field: 'sub', message: 'must not contain NUL characters or unpaired surrogates' }]);
    // fetchUserInfo checks that the userinfo `sub` is the ID token's, so its e-mail belongs to the same account.
    const userinfo =
      !claimString(claims.email) && client.serverMetadata().userinfo_endpoint
        ? await oidc.fetchUserInfo(client, tokens.access_token, claims.sub)
        : {};
    const profile: Record<string, unknown> = { ...claims, ...userinfo };
    return {
      subject: claims.sub,
      email: claimString(profile.email),
      emailVerified: claimTrue(profile.email_verified),
      name: claimString(profile.name),
    };
  } catch (error) {
    throw exchangeError(provider.config.name, error) ?? error;
  }
}
