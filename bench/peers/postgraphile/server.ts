// Peer of `pnpm bench`: PostGraphile 5 (amber preset, grafserv on node:http) over the product's database, production
// settings: no GraphiQL, no explain, no watch. Its schema names things its own way (userByRowId(rowId), rowId,
// allUsers.nodes, postsByAuthorId.nodes, userByAuthorId); the bench sends it the equivalent queries. PostGraphile 5
// needs Node >= 22 (it uses Promise.withResolvers; on Node 20 every query fails). Run:
// NODE_ENV=production node --import tsx bench/peers/postgraphile/server.ts (DATABASE_URL, PORT)
import { createServer } from 'node:http';
import { postgraphile } from 'postgraphile';
import { makePgService } from 'postgraphile/adaptors/pg';
import { grafserv } from 'postgraphile/grafserv/node';
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber';

const preset: GraphileConfig.Preset = {
  extends: [PostGraphileAmberPreset],
  // A pg Pool of 10, the same size as the product's adapter, the baseline and the Apollo peer (pg's default).
  pgServices: [makePgService({ connectionString: process.env.DATABASE_URL!, poolConfig: { max: 10 }, schemas: ['public'] })],
  grafserv: { graphqlPath: '/graphql', graphiql: false, watch: false },
  grafast: { explain: false },
};

const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
serv.addTo(server);
// Builds the schema (introspection) before listening, so "listening" means ready to answer.
await pgl.getSchema();
await new Promise<void>((resolve) => server.listen(Number(process.env.PORT ?? 4952), '127.0.0.1', resolve));

const close = async () => {
  server.close();
  await pgl.release(); // ends its pool
  process.exit(0);
};
process.once('SIGTERM', close);
process.once('SIGINT', close);
