// Configuration from the environment: validation messages, secrets in production and outside it.
import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ajv } from 'ajv';
import { CONFIG_AJV_OPTIONS, CONFIG_SCHEMA } from '../../src/config/config-schema.js';
import { loadConfig } from '../../src/config/config.js';
import validateConfig from '../../src/generated/config-validator.cjs';
import { repoRoot } from '../../src/paths.js';

const tempDir = () => mkdtempSync(path.join(os.tmpdir(), 'users-posts-config-'));
const strong = (letter: string) => letter.repeat(40);
const productionSecrets = {
  JWT_ACCESS_SECRET: strong('a'),
  JWT_REFRESH_SECRET: strong('b'),
  SESSION_SECRET: strong('c'),
  SIGNING_SECRET: strong('d'),
};

describe('loadConfig', () => {
  it('has working defaults: port 4000, embedded PGlite under the data dir', () => {
    const dataDir = tempDir();
    const config = loadConfig({ DATA_DIR: dataDir });
    expect(config).toMatchObject({ port: 4000, databaseUrl: undefined, pgliteDir: path.join(dataDir, 'pglite'), admin: undefined });
    // Traces off and every document accepted unless asked for.
    expect(config.tracing).toBeUndefined();
    expect(config.persistedDocuments).toEqual({ file: undefined, trustedOnly: false });
  });

  it('listens on loopback only outside production, on every interface in production, and where HOST says', () => {
    const dataDir = tempDir();
    // A newcomer's development server on a shared network (a café, an office) is not offered to it.
    expect(loadConfig({ DATA_DIR: dataDir }).host).toBe('127.0.0.1');
    expect(loadConfig({ DATA_DIR: dataDir, NODE_ENV: 'development' }).host).toBe('127.0.0.1');
    expect(loadConfig({ DATA_DIR: dataDir, NODE_ENV: 'production', ...productionSecrets }).host).toBe('0.0.0.0');
    expect(loadConfig({ DATA_DIR: dataDir, HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(loadConfig({ DATA_DIR: dataDir, NODE_ENV: 'production', HOST: '10.0.0.5', ...productionSecrets }).host).toBe('10.0.0.5');
  });

  it('turns traces on with an OTLP endpoint (and off again with OTEL_SDK_DISABLED), and takes the manifest from the repository', () => {
    const on = loadConfig({ DATA_DIR: tempDir(), OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SERVICE_NAME: 'api-eu' });
    expect(on.tracing).toEqual({ serviceName: 'api-eu' });
    expect(loadConfig({ DATA_DIR: tempDir(), OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector/v1/traces' }).tracing).toEqual({
      serviceName: 'users-posts',
    });
    expect(
      loadConfig({ DATA_DIR: tempDir(), OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).tracing,
    ).toBeUndefined();
    const trusted = loadConfig({
      DATA_DIR: tempDir(),
      GRAPHQL_PERSISTED_DOCUMENTS: 'packages/client/persisted-documents.json',
      GRAPHQL_TRUSTED_DOCUMENTS_ONLY: 'true',
    });
    expect(trusted.persistedDocuments).toEqual({ file: path.resolve(repoRoot, 'packages/client/persisted-documents.json'), trustedOnly: true });
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT/],
    [{ PORT: '70000' }, /PORT/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ ADMIN_EMAIL: 'root@example.com' }, /ADMIN_PASSWORD/],
    [{ GRAPHQL_TRUSTED_DOCUMENTS_ONLY: 'true' }, /GRAPHQL_PERSISTED_DOCUMENTS/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /OTEL_EXPORTER_OTLP_ENDPOINT/],
  ])('rejects %p with a message naming the variable', (env, message) => {
    expect(() => loadConfig({ DATA_DIR: tempDir(), ...env })).toThrow(message);
  });

  it('lets V8 optimise the embedded database only with PGLITE_WASM_TIER_UP=true, the one word main.ts reads as yes before it', () => {
    const tierUp = (value?: string) =>
      loadConfig({ DATA_DIR: tempDir(), ...(value === undefined ? {} : { PGLITE_WASM_TIER_UP: value }) }).pgliteWasmTierUp;
    expect([tierUp(), tierUp(''), tierUp('false'), tierUp('true')]).toEqual([false, false, false, true]);
    // Anything else fails the start, so main.ts's early reading (=== 'true') never disagrees with a server that runs.
    for (const value of ['1', 'yes', 'TRUE', 'on']) expect(() => tierUp(value)).toThrow(/^env\/PGLITE_WASM_TIER_UP must be boolean$/);
  });

  it('says every bad variable at once, as env/NAME, and ignores variables it does not know', () => {
    expect(() => loadConfig({ DATA_DIR: tempDir(), PORT: 'eighty', LOG_LEVEL: 'loud' })).toThrow(
      /^env\/PORT must be integer, env\/LOG_LEVEL must be equal to one of the allowed values$/,
    );
    expect(loadConfig({ DATA_DIR: tempDir(), PATH: '/usr/bin', HOME: '/root', PORT: '4100' }).port).toBe(4100);
  });

  it('has a schema that is valid JSON Schema (the start does not check it, to save compiling the meta-schema)', () => {
    const ajv = new Ajv({ allowUnionTypes: true });
    expect(ajv.validateSchema(CONFIG_SCHEMA)).toBe(true);
    expect(() => ajv.compile(CONFIG_SCHEMA)).not.toThrow();
  });

  it('validates with the generated code exactly as Ajv compiling the schema now does (verdict, coercions, defaults, errors)', () => {
    const compiled = new Ajv(CONFIG_AJV_OPTIONS).compile(CONFIG_SCHEMA);
    const environments: Record<string, string>[] = [
      {},
      { PORT: '4100', MIGRATE_ON_START: 'true', RATE_LIMIT_MAX: '5', UNKNOWN: 'x', CORS_ORIGINS: 'https://a.example' },
      { PORT: 'eighty', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x', HOST: '' },
      { ADMIN_EMAIL: 'admin@example.com' }, // without its ADMIN_PASSWORD
      { ADMIN_EMAIL: 'admin@example.com', ADMIN_PASSWORD: 'x'.repeat(129), GRAPHQL_MAX_BATCH: '101', PORT: '65536' },
      { METRICS_TOKEN: '😀'.repeat(8), TRUST_PROXY: '10.0.0.0/8, 127.0.0.1', GRAPHQL_FAST_PATH: 'false' }, // 8 characters, 16 UTF-16 units
    ];
    for (const environment of environments) {
      const [generated, fresh] = [{ ...environment }, { ...environment }];
      const verdicts = [validateConfig(generated), compiled(fresh)];
      expect({ environment, verdict: verdicts[0], data: generated, errors: validateConfig.errors }).toEqual({
        environment,
        verdict: verdicts[1],
        data: fresh,
        errors: compiled.errors,
      });
    }
  });

  it('generates secrets once outside production and keeps them in the data dir', () => {
    const dataDir = tempDir();
    const first = loadConfig({ DATA_DIR: dataDir }).secrets;
    const second = loadConfig({ DATA_DIR: dataDir }).secrets;
    expect(second).toEqual(first);
    expect(first.jwtAccess).not.toEqual(first.jwtRefresh);
    const file = path.join(dataDir, 'secrets.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(first);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('refuses to start in production without every secret', () => {
    const { SIGNING_SECRET: _omitted, ...partial } = productionSecrets;
    expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR: tempDir(), ...partial })).toThrow(/SIGNING_SECRET/);
  });

  it('refuses short or identical JWT secrets', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR: tempDir(), ...productionSecrets, SESSION_SECRET: 'short' })).toThrow(
      /SESSION_SECRET must be at least 32 bytes/,
    );
    expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR: tempDir(), ...productionSecrets, JWT_REFRESH_SECRET: strong('a') })).toThrow(
      /must differ/,
    );
  });

  it('uses the environment secrets in production', () => {
    const config = loadConfig({ NODE_ENV: 'production', DATA_DIR: tempDir(), ...productionSecrets });
    expect(config.secrets).toEqual({ jwtAccess: strong('a'), jwtRefresh: strong('b'), session: strong('c'), signing: strong('d') });
  });
});
