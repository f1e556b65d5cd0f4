// Entry point: config from env, build the app, listen, and shut down gracefully on SIGTERM/SIGINT.
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { loadConfig } from './config.js';

const config = loadConfig();
const app = await buildApp(config);

closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an error');
  else app.log.info({ signal }, 'shutting down');
  // A request that finishes during the close leaves a keep-alive connection the server would wait on: end such idle ones.
  const idle = setInterval(() => app.server.closeIdleConnections(), 100);
  await app.close().finally(() => clearInterval(idle));
});

await app.listen({ host: config.host, port: config.port });
