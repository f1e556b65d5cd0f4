// Signing secrets: required from env in production; generated once and kept in the data dir otherwise.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface Secrets {
  jwtAccess: string;
  jwtRefresh: string;
  session: string;
  signing: string;
}

const ENV_NAMES = {
  jwtAccess: 'JWT_ACCESS_SECRET',
  jwtRefresh: 'JWT_REFRESH_SECRET',
  session: 'SESSION_SECRET',
  signing: 'SIGNING_SECRET',
} as const satisfies Record<keyof Secrets, string>;

const MIN_BYTES = 32;

/** Fresh random secrets (tests, and the first start outside production). */
export function generateSecrets(): Secrets {
  const make = () => randomBytes(48).toString('base64url');
  return { jwtAccess: make(), jwtRefresh: make(), session: make(), signing: make() };
}

function readKept(file: string): Partial<Secrets> {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Partial<Secrets>) : {};
}

export function resolveSecrets(env: NodeJS.ProcessEnv, { dataDir, production }: { dataDir: string; production: boolean }): Secrets {
  const fromEnv: Partial<Secrets> = {};
  for (const [key, name] of Object.entries(ENV_NAMES) as [keyof Secrets, string][]) {
    if (env[name]) fromEnv[key] = env[name];
  }
  let secrets: Secrets;
  if (production) {
    const missing = Object.entries(ENV_NAMES)
      .filter(([key]) => !fromEnv[key as keyof Secrets])
      .map(([, name]) => name);
    if (missing.length) throw new Error(`NODE_ENV=production requires ${missing.join(', ')}`);
    secrets = fromEnv as Secrets;
  } else {
    const file = path.join(dataDir, 'secrets.json');
    const kept = readKept(file);
    const generated = generateSecrets();
    secrets = { ...generated, ...kept, ...fromEnv };
    if (Object.keys(ENV_NAMES).some((key) => !kept[key as keyof Secrets])) {
      mkdirSync(dataDir, { recursive: true });
      const toKeep = { ...generated, ...kept };
      writeFileSync(file, JSON.stringify(toKeep, null, 2), { mode: 0o600 });
    }
  }
  const short = Object.entries(ENV_NAMES)
    .filter(([key]) => Buffer.byteLength(secrets[key as keyof Secrets]) < MIN_BYTES)
    .map(([, name]) => name);
  if (short.length) throw new Error(`${short.join(', ')} must be at least ${MIN_BYTES} bytes`);
  if (secrets.jwtAccess === secrets.jwtRefresh) throw new Error('JWT_ACCESS_SECRET and JWT_REFRESH_SECRET must differ');
  return secrets;
}
