// The configured OpenID Connect providers, each with its discovered openid-client Configuration (cached per provider).
import * as oidc from 'openid-client';
import { AppError } from '../../errors/app-error.js';
import { isLoopbackUrl, type OAuthProviderConfig } from '../../config/oauth-config.js';
import { discoveryError } from './errors.js';

/** Seconds a discovery request (and every later request to the issuer) may take before the issuer counts as down. */
const ISSUER_TIMEOUT_SECONDS = 5;
/** Metadata is re-discovered after this long, so an issuer that moves an endpoint is picked up without a restart. */
const DISCOVERY_TTL_MS = 60 * 60 * 1000;

/**
 * client_secret_basic is the OpenID Connect default; use client_secret_post only for an issuer that advertises post
 * and not basic. Chosen per request because the metadata is known only after discovery.
 */
function clientAuthentication(secret: string): oidc.ClientAuth {
  const basic = oidc.ClientSecretBasic(secret);
  const post = oidc.ClientSecretPost(secret);
  return (server, client, body, headers) => {
    const methods = server.token_endpoint_auth_methods_supported;
    const postOnly = methods?.includes('client_secret_post') && !methods.includes('client_secret_basic');
    return (postOnly ? post : basic)(server, client, body, headers);
  };
}

export class OAuthProvider {
  private discovered: { at: number; configuration: Promise<oidc.Configuration> } | undefined;

  constructor(readonly config: OAuthProviderConfig) {}

  /** The issuer's metadata and the client settings; a failed discovery is not cached (the next request retries). */
  async client(): Promise<oidc.Configuration> {
    if (!this.discovered || Date.now() - this.discovered.at > DISCOVERY_TTL_MS) {
      const configuration = this.discover();
      this.discovered = { at: Date.now(), configuration };
      configuration.catch(() => {
        if (this.discovered?.configuration === configuration) this.discovered = undefined;
      });
    }
    return this.discovered.configuration;
  }

  private async discover(): Promise<oidc.Configuration> {
    const issuer = new URL(this.config.issuer);
    try {
      return await oidc.discovery(issuer, this.config.clientId, undefined, clientAuthentication(this.config.clientSecret), {
        timeout: ISSUER_TIMEOUT_SECONDS,
        // Plain http only for an issuer on this machine (config.ts refuses it elsewhere).
        execute: issuer.protocol === 'http:' && isLoopbackUrl(issuer) ? [oidc.allowInsecureRequests] : [],
      });
    } catch (error) {
      throw discoveryError(this.config.name, error);
    }
  }
}

// One registry per configured provider list (that is, per app): tests build several apps with different issuers.
const registries = new WeakMap<readonly OAuthProviderConfig[], Map<string, OAuthProvider>>();

/** The provider named `name` (the `{provider}` path parameter), or 404. */
export function oauthProvider(configs: readonly OAuthProviderConfig[], name: string): OAuthProvider {
  let registry = registries.get(configs);
  if (!registry) {
    registry = new Map(configs.map((config) => [config.name, new OAuthProvider(config)]));
    registries.set(configs, registry);
  }
  // A Map, not an object: `constructor` or `__proto__` are valid path values and must not find anything.
  const provider = registry.get(name);
  if (!provider) throw new AppError('NOT_FOUND', `Unknown OAuth provider ${name}`);
  return provider;
}
