// OpenID Connect providers from env (`OAUTH_<NAME>_ISSUER`, `_CLIENT_ID`, `_CLIENT_SECRET`, `_REDIRECT_URI`), checked at start.

export interface OAuthProviderConfig {
  /** `<NAME>` in lower case: the `{provider}` of `/auth/oauth/{provider}/…`. */
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

const SUFFIXES = { ISSUER: 'issuer', CLIENT_ID: 'clientId', CLIENT_SECRET: 'clientSecret', REDIRECT_URI: 'redirectUri' } as const;
type Suffix = keyof typeof SUFFIXES;

// The name is the shortest prefix that leaves a known suffix, so `OAUTH_MY_IDP_CLIENT_ID` is provider `my_idp`.
const VARIABLE = /^OAUTH_([A-Z0-9][A-Z0-9_]*?)_(ISSUER|CLIENT_ID|CLIENT_SECRET|REDIRECT_URI)$/;
/** The contract's pattern for `{provider}` (openapi.yaml, components.parameters.provider). */
const PROVIDER_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Whether `url` points at this machine, the only place plain http is accepted (development, a local test provider). */
export function isLoopbackUrl(url: URL): boolean {
  return LOOPBACK_HOSTS.has(url.hostname);
}

// The issuer and the redirect target carry codes and tokens: https, except on this machine (development, tests).
function checkUrl(variable: string, value: string, errors: string[]): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    errors.push(`${variable} must be an absolute URL`);
    return;
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackUrl(url))) return;
  errors.push(`${variable} must be an https URL (http only for 127.0.0.1/localhost)`);
}

/** Every provider configured in `env`; throws one error naming each missing or malformed variable. */
export function parseOAuthProviders(env: Record<string, string | undefined>): OAuthProviderConfig[] {
  // bound: per call (the environment read once at start)
  const found = new Map<string, Partial<Record<Suffix, string>>>();
  for (const [key, value] of Object.entries(env)) {
    const match = VARIABLE.exec(key);
    if (!match || value === undefined || value === '') continue;
    const [, name, suffix] = match as unknown as [string, string, Suffix];
    found.set(name, { ...found.get(name), [suffix]: value });
  }

  const errors: string[] = [];
  const providers: OAuthProviderConfig[] = [];
  for (const [name, values] of [...found].sort(([a], [b]) => a.localeCompare(b))) {
    const missing = (Object.keys(SUFFIXES) as Suffix[]).filter((suffix) => !values[suffix]).map((suffix) => `OAUTH_${name}_${suffix}`);
    if (missing.length) {
      errors.push(`OAuth provider ${name} is incomplete: missing ${missing.join(', ')}`);
      continue;
    }
    const lower = name.toLowerCase();
    if (!PROVIDER_NAME.test(lower)) errors.push(`OAUTH_${name}_*: provider name must be at most 64 characters`);
    checkUrl(`OAUTH_${name}_ISSUER`, values.ISSUER!, errors);
    checkUrl(`OAUTH_${name}_REDIRECT_URI`, values.REDIRECT_URI!, errors);
    providers.push({
      name: lower,
      issuer: values.ISSUER!,
      clientId: values.CLIENT_ID!,
      clientSecret: values.CLIENT_SECRET!,
      redirectUri: values.REDIRECT_URI!,
    });
  }
  if (errors.length) throw new Error(`Invalid OAuth configuration: ${errors.join('; ')}`);
  return providers;
}
