// Peer of `pnpm bench`: Apollo Server 5 (its standalone node:http server) with per-request DataLoaders over a raw `pg`
// Pool, written the way an Apollo user would, answering the bench's GraphQL reads with the product's JSON shape.
// Run: NODE_ENV=production node --import tsx bench/peers/apollo/server.ts (DATABASE_URL, PORT)
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import DataLoader from 'dataloader';
import pg from 'pg';

// The same pool size as the product's adapter and the baseline (pg's default).
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

const typeDefs = /* GraphQL */ `
  type User {
    id: ID!
    name: String!
    email: String!
    posts: [Post!]!
  }
  type Post {
    id: ID!
    title: String!
    author: User!
  }
  type Query {
    users(limit: Int, offset: Int): [User!]!
    user(id: ID!): User
  }
`;

interface UserRow {
  id: number;
  name: string;
  email: string;
}
interface PostRow {
  id: number;
  title: string;
  author_id: number;
}

/** Per-request loaders: batch and de-duplicate the lookups one request makes, cache nothing across requests. */
function makeLoaders() {
  return {
    user: new DataLoader<number, UserRow | null>(async (ids) => {
      const { rows } = await pool.query<UserRow>('SELECT id, name, email FROM users WHERE id = ANY($1)', [ids]);
      const byId = new Map(rows.map((row) => [row.id, row]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
    postsByAuthor: new DataLoader<number, PostRow[]>(async (authorIds) => {
      const { rows } = await pool.query<PostRow>('SELECT id, title, author_id FROM posts WHERE author_id = ANY($1) ORDER BY id', [authorIds]);
      const byAuthor = new Map<number, PostRow[]>();
      for (const row of rows) {
        const list = byAuthor.get(row.author_id);
        if (list) list.push(row);
        else byAuthor.set(row.author_id, [row]);
      }
      return authorIds.map((id) => byAuthor.get(id) ?? []);
    }),
  };
}
type Context = { loaders: ReturnType<typeof makeLoaders> };

const resolvers = {
  Query: {
    users: async (_: unknown, args: { limit?: number | null; offset?: number | null }) => {
      const { rows } = await pool.query<UserRow>('SELECT id, name, email FROM users ORDER BY id LIMIT $1 OFFSET $2', [
        Math.min(args.limit ?? 1000, 1000),
        args.offset ?? 0,
      ]);
      return rows;
    },
    user: (_: unknown, args: { id: string }, context: Context) => {
      const id = Number(args.id);
      return Number.isSafeInteger(id) ? context.loaders.user.load(id) : null;
    },
  },
  User: {
    posts: (user: UserRow, _: unknown, context: Context) => context.loaders.postsByAuthor.load(user.id),
  },
  Post: {
    author: (post: PostRow, _: unknown, context: Context) => context.loaders.user.load(post.author_id),
  },
};

const server = new ApolloServer<Context>({ typeDefs, resolvers });
await startStandaloneServer(server, {
  listen: { host: '127.0.0.1', port: Number(process.env.PORT ?? 4951) },
  context: async () => ({ loaders: makeLoaders() }),
});

const close = async () => {
  await server.stop();
  await pool.end();
  process.exit(0);
};
process.once('SIGTERM', close);
process.once('SIGINT', close);
