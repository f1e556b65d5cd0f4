// A real local OpenID Connect provider for tests (oauth2-mock-server on 127.0.0.1, random port), with its token endpoint's answers recorded.
import { afterAll, beforeAll, beforeEach } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Events, OAuth2Issuer, OAuth2Service, type MutableToken } from 'oauth2-mock-server';
import type { OAuthProviderConfig } from '../../src/config/oauth-config.js';
import { createTestApp } from './app.js';

/** What the token endpoint received and answered (the mock server checks `code_verifier` against `code_challenge`). */
export interface TokenExchange {
  codeVerifier: string | undefined;
  status: number;
  body: string;
}

export class LocalOidcProvider {
  /** Claims merged into every token the next exchanges sign (`sub`, `email`, `name`, …). */
  claims: Record<string, unknown> = {};
  readonly exchanges: TokenExchange[] = [];

  private constructor(
    readonly service: OAuth2Service,
    private readonly issuer: OAuth2Issuer,
    private readonly http: Server,
  ) {
    service.on(Events.BeforeTokenSigning, (token: MutableToken) => {
      // The mock server already copies the authorization request's nonce into the ID token; the claims may override it.
      Object.assign(token.payload, this.claims);
    });
  }

  static async start(): Promise<LocalOidcProvider> {
    const issuer = new OAuth2Issuer();
    // keys.generate() rejects jose's JWK under jest (an object from another realm fails its plain-object check);
    // add() copies the key into a fresh object.
    const jwk = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
    await issuer.keys.add({ ...jwk, alg: 'RS256', kid: 'local-test-key' });
    const service = new OAuth2Service(issuer);
    // Our own HTTP server around the mock's handler, only to record what the token endpoint answers.
    let provider!: LocalOidcProvider;
    const http = createServer((request, response) => {
      if (request.url?.startsWith('/token')) provider.record(request, response);
      service.requestHandler(request, response);
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    issuer.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    provider = new LocalOidcProvider(service, issuer, http);
    return provider;
  }

  get url(): string {
    return this.issuer.url!;
  }

  /** App configuration for this issuer under `name`. */
  providerConfig(name = 'local'): OAuthProviderConfig {
    return {
      name,
      issuer: this.url,
      // Alphanumeric on purpose: the mock reads the client id from Basic auth without the form-decoding RFC 6749 §2.3.1
      // asks for, so `users-posts` (sent as `users%2Dposts`) would come back as a wrong ID-token audience.
      clientId: 'usersposts',
      clientSecret: 'local-client-secret',
      redirectUri: `http://127.0.0.1/auth/oauth/${name}/callback`,
    };
  }

  /** Plays the browser at the provider: follows the authorization URL and returns where the provider redirects. */
  async authorize(authorizationUrl: string): Promise<URL> {
    const response = await fetch(authorizationUrl, { redirect: 'manual' });
    if (response.status !== 302) throw new Error(`authorization endpoint answered ${response.status}: ${await response.text()}`);
    return new URL(response.headers.get('location')!);
  }

  async stop(): Promise<void> {
    this.http.closeAllConnections();
    await new Promise<void>((resolve, reject) => this.http.close((error) => (error ? reject(error) : resolve())));
  }

  private record(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    const end = response.end.bind(response) as (...args: unknown[]) => typeof response;
    response.end = ((...args: unknown[]) => {
      if (args[0] !== undefined && typeof args[0] !== 'function') chunks.push(Buffer.from(args[0] as string | Buffer));
      return end(...args);
    }) as typeof response.end;
    response.on('finish', () => {
      // The mock parses the form body onto `request.body` before answering.
      const body = (request as { body?: Record<string, unknown> }).body;
      const codeVerifier = typeof body?.code_verifier === 'string' ? body.code_verifier : undefined;
      this.exchanges.push({ codeVerifier, status: response.statusCode, body: Buffer.concat(chunks).toString() });
    });
  }
}

/**
 * A suite's app with this provider configured as `local`: both started before the suite and stopped after it, the
 * provider's claims and recorded exchanges cleared before each test. `started` receives them once they run.
 */
export function useOidcApp(started: (suite: { provider: LocalOidcProvider; app: FastifyInstance }) => void): void {
  let suite: { provider: LocalOidcProvider; app: FastifyInstance } | undefined;
  beforeAll(async () => {
    const provider = await LocalOidcProvider.start();
    suite = { provider, app: await createTestApp({ oauthProviders: [provider.providerConfig('local')] }) };
    started(suite);
  });
  afterAll(async () => {
    await suite?.app.close();
    await suite?.provider.stop();
  });
  beforeEach(() => {
    if (!suite) return;
    suite.provider.claims = {};
    suite.provider.exchanges.length = 0;
  });
}
