// Entry point: config from env, build the app, listen, and shut down gracefully on SIGTERM/SIGINT.
import closeWithGrace from 'close-with-grace';
import path from 'node:path';
import { optimiseWebAssemblyFromEnv, startPGliteThread, type PGliteThread } from '@users-posts/db/embedded-thread';
import type { buildApp } from './app.js';
import { dataDirectories } from './paths.js';
import { assertPortFree, startupFailureLine } from './startup-failure.js';

let app: Awaited<ReturnType<typeof buildApp>> | undefined;
let pgliteThread: PGliteThread | undefined;
try {
  // First of all, the embedded database (without DATABASE_URL) starts opening in its own thread: its ~0.6 s of CPU
  // then runs beside this thread's own start (loading the config's validator and the app) instead of after it. The
  // few modules above are all that loads before; a bad setting found by loadConfig still fails the start.
  // PGLITE_WASM_TIER_UP is read here as loadConfig reads it (only "true" is yes; empty is unset; any other word but
  // "false" then fails the start).
  pgliteThread = process.env.DATABASE_URL
    ? undefined
    : startPGliteThread(dataDirectories(process.env).pgliteDir, { optimiseWebAssembly: optimiseWebAssemblyFromEnv(process.env) });
  const { loadConfig } = await import('./config/config.js');
  const config = loadConfig();
  await assertPortFree(config.host, config.port);
  const { buildApp } = await import('./app.js');
  const started = await buildApp(config, { pgliteThread });
  app = started;

  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) started.log.error({ err }, 'shutting down after an error');
    else started.log.info({ signal }, 'shutting down');
    // A request that finishes during the close leaves a keep-alive connection the server would wait on: end such idle ones.
    const idle = setInterval(() => started.server.closeIdleConnections(), 100);
    await started.close().finally(() => clearInterval(idle));
  });

  const address = await started.listen({ host: config.host, port: config.port });
  // The start-up banner: where to go next, where the data is, where development secrets live.
  const base = address.replace(/:\/\/(0\.0\.0\.0|127\.0\.0\.1|\[::\])/, '://localhost');
  const database = started.db.kind === 'pglite' ? `embedded PGlite in ${config.pgliteDir}` : 'PostgreSQL (DATABASE_URL)';
  const secrets =
    config.nodeEnv === 'production' ? 'secrets from the environment' : `development secrets in ${path.join(config.dataDir, 'secrets.json')}`;
  // Where it listens, as bound: loopback by default outside production, which a container's published port cannot reach.
  const loopbackByDefault = !process.env.HOST && config.host === '127.0.0.1';
  const bound = loopbackByDefault ? `${address} (loopback only outside production: HOST=0.0.0.0 serves other machines)` : address;
  started.log.info(
    `users-posts ready: REST reference ${base}/docs, GraphQL ${base}/graphql; listening on ${bound}; database: ${database}; ${secrets}`,
  );
} catch (error) {
  // A start that fails says why and what to do in one line, at once; the stack only when asked for.
  process.stderr.write(`users-posts: cannot start: ${startupFailureLine(error)}\n`);
  if (process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace') console.error(error);
  await (app ? app.close() : pgliteThread?.stop())?.catch(() => undefined);
  process.exit(1);
}
