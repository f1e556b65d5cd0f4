// OAuth providers from env (SPEC §3): OAUTH_<NAME>_ISSUER, _CLIENT_ID, _CLIENT_SECRET, _REDIRECT_URI, checked at start.
import { describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/config.js';

const tempDir = () => mkdtempSync(path.join(os.tmpdir(), 'users-posts-oauth-config-'));

const google = {
  OAUTH_GOOGLE_ISSUER: 'https://accounts.google.com',
  OAUTH_GOOGLE_CLIENT_ID: 'client-id.apps.googleusercontent.com',
  OAUTH_GOOGLE_CLIENT_SECRET: 'google-secret',
  OAUTH_GOOGLE_REDIRECT_URI: 'https://api.example.com/auth/oauth/google/callback',
};

describe('OAuth providers in loadConfig', () => {
  it('none by default', () => {
    expect(loadConfig({ DATA_DIR: tempDir() }).oauthProviders).toEqual([]);
  });

  it('reads every complete provider; {provider} is <NAME> in lower case (underscores kept)', () => {
    const config = loadConfig({
      DATA_DIR: tempDir(),
      ...google,
      OAUTH_MY_IDP_ISSUER: 'http://127.0.0.1:8080',
      OAUTH_MY_IDP_CLIENT_ID: 'c',
      OAUTH_MY_IDP_CLIENT_SECRET: 's',
      OAUTH_MY_IDP_REDIRECT_URI: 'http://localhost:4000/auth/oauth/my_idp/callback',
    });
    expect(config.oauthProviders).toEqual([
      {
        name: 'google',
        issuer: 'https://accounts.google.com',
        clientId: 'client-id.apps.googleusercontent.com',
        clientSecret: 'google-secret',
        redirectUri: 'https://api.example.com/auth/oauth/google/callback',
      },
      {
        name: 'my_idp',
        issuer: 'http://127.0.0.1:8080',
        clientId: 'c',
        clientSecret: 's',
        redirectUri: 'http://localhost:4000/auth/oauth/my_idp/callback',
      },
    ]);
  });

  it.each(['OAUTH_GOOGLE_ISSUER', 'OAUTH_GOOGLE_CLIENT_ID', 'OAUTH_GOOGLE_CLIENT_SECRET', 'OAUTH_GOOGLE_REDIRECT_URI'])(
    'refuses to start without %s, naming it',
    (missing) => {
      const env: Record<string, string> = { DATA_DIR: tempDir(), ...google };
      delete env[missing];
      expect(() => loadConfig(env)).toThrow(new RegExp(`missing ${missing}`));
    },
  );

  it('an empty variable counts as missing', () => {
    expect(() => loadConfig({ DATA_DIR: tempDir(), ...google, OAUTH_GOOGLE_CLIENT_SECRET: '' })).toThrow(/OAUTH_GOOGLE_CLIENT_SECRET/);
  });

  it.each([
    [{ OAUTH_GOOGLE_ISSUER: 'not a url' }, /OAUTH_GOOGLE_ISSUER must be an absolute URL/],
    [{ OAUTH_GOOGLE_ISSUER: 'http://idp.example.com' }, /OAUTH_GOOGLE_ISSUER must be an https URL/],
    [{ OAUTH_GOOGLE_REDIRECT_URI: 'http://api.example.com/cb' }, /OAUTH_GOOGLE_REDIRECT_URI must be an https URL/],
  ])('refuses %p', (override, message) => {
    expect(() => loadConfig({ DATA_DIR: tempDir(), ...google, ...override })).toThrow(message);
  });
});
