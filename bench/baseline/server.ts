// The practical ceiling: a minimal Fastify server on a raw `pg` Pool answering what the bench scenarios ask of the product.
// No Prisma, no contract validation, no auth, no logging: one handler per endpoint, hand-written SQL, the same JSON
// shapes as the product (envelope for REST, `{data}` for the GraphQL equivalents). Run: node --import tsx bench/baseline/server.ts
import Fastify from 'fastify';
import pg from 'pg';

// The product's adapter (@prisma/adapter-pg given a connection string) builds a pg.Pool with pg's default size.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 }); // pg.defaults.max
const app = Fastify({ logger: false });

interface UserRow {
  id: number;
  name: string;
  email: string;
  age: number | null;
  role: string;
  created_at: Date;
  updated_at: Date;
}
interface PostRow {
  id: number;
  title: string;
  content: string;
  author_id: number;
  created_at: Date;
  updated_at: Date;
}

const USER_COLUMNS = 'id, name, email, age, role, created_at, updated_at';
const user = (row: UserRow) => ({
  id: row.id,
  name: row.name,
  email: row.email,
  age: row.age,
  role: row.role,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});
const post = (row: PostRow) => ({
  id: row.id,
  title: row.title,
  content: row.content,
  authorId: row.author_id,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});
const ok = (data: unknown) => ({ code: 0, message: 'ok', data });

/** A positive integer from a path or query value, else null. */
const int = (value: unknown): number | null => (typeof value === 'string' && /^[1-9]\d{0,8}$/.test(value) ? Number(value) : null);

app.get<{ Params: { id: string } }>('/users/:id', async (request, reply) => {
  const id = int(request.params.id);
  const { rows } = id ? await pool.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [id]) : { rows: [] };
  if (!rows[0]) return reply.code(404).send({ code: 40400, message: 'User not found' });
  return ok(user(rows[0]));
});

app.get<{ Querystring: { page?: string; pageSize?: string } }>('/users', async (request) => {
  const page = int(request.query.page) ?? 1;
  const pageSize = Math.min(int(request.query.pageSize) ?? 20, 100);
  const [items, count] = await Promise.all([
    pool.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users ORDER BY id LIMIT $1 OFFSET $2`, [pageSize, (page - 1) * pageSize]),
    pool.query<{ total: number }>('SELECT count(*)::int AS total FROM users'),
  ]);
  const total = count.rows[0]!.total;
  return ok({ items: items.rows.map(user), total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
});

// GraphQL `user(id) { id name email }`: the same request body as the product gets; only variables.id is read.
app.post<{ Body: { variables: { id: string } } }>('/graphql/user', async (request) => {
  const id = int(request.body.variables.id);
  const { rows } = id
    ? await pool.query<Pick<UserRow, 'id' | 'name' | 'email'>>('SELECT id, name, email FROM users WHERE id = $1', [id])
    : { rows: [] };
  const row = rows[0];
  return { data: { user: row ? { id: String(row.id), name: row.name, email: row.email } : null } };
});

// GraphQL `{ users(limit: N) { id name posts { id title author { name } } } }` in three batched queries, as DataLoader
// would; N comes from `?limit=` (the product's query states it inline).
app.post<{ Querystring: { limit?: string } }>('/graphql/nested', async (request) => {
  const limit = Math.min(int(request.query.limit) ?? 1000, 1000);
  const users = await pool.query<{ id: number; name: string }>('SELECT id, name FROM users ORDER BY id LIMIT $1', [limit]);
  const ids = users.rows.map((row) => row.id);
  const posts = await pool.query<{ id: number; title: string; author_id: number }>(
    'SELECT id, title, author_id FROM posts WHERE author_id = ANY($1) ORDER BY id',
    [ids],
  );
  const authorIds = [...new Set(posts.rows.map((row) => row.author_id))];
  const authors = await pool.query<{ id: number; name: string }>('SELECT id, name FROM users WHERE id = ANY($1)', [authorIds]);
  const nameById = new Map(authors.rows.map((row) => [row.id, row.name]));
  const postsByAuthor = new Map<number, { id: string; title: string; author: { name: string } }[]>();
  for (const row of posts.rows) {
    const list = postsByAuthor.get(row.author_id) ?? [];
    list.push({ id: String(row.id), title: row.title, author: { name: nameById.get(row.author_id)! } });
    postsByAuthor.set(row.author_id, list);
  }
  return { data: { users: users.rows.map(({ id, name }) => ({ id: String(id), name, posts: postsByAuthor.get(id) ?? [] })) } };
});

const insertPost = (title: string, content: string, authorId: number) =>
  pool.query<PostRow>(
    'INSERT INTO posts (title, content, author_id, updated_at) VALUES ($1, $2, $3, now()) RETURNING id, title, content, author_id, created_at, updated_at',
    [title, content, authorId],
  );

app.post<{ Params: { id: string }; Body: { title: string; content: string } }>('/users/:id/posts', async (request, reply) => {
  const authorId = int(request.params.id);
  if (!authorId || typeof request.body?.title !== 'string' || typeof request.body.content !== 'string') {
    return reply.code(400).send({ code: 40000, message: 'Bad request' });
  }
  const { rows } = await insertPost(request.body.title, request.body.content, authorId);
  return reply
    .code(201)
    .header('location', `/users/${authorId}/posts/${rows[0]!.id}`)
    .send(ok(post(rows[0]!)));
});

// GraphQL `createPost(title, content, authorId) { id }` with the product's request body (variables t, c, a).
app.post<{ Body: { variables: { t: string; c: string; a: string } } }>('/graphql/create-post', async (request) => {
  const { t, c, a } = request.body.variables;
  const { rows } = await insertPost(t, c, Number(a));
  return { data: { createPost: { id: String(rows[0]!.id) } } };
});

app.get('/readyz', async () => {
  await pool.query('SELECT 1');
  return { status: 'ok' };
});

const close = async () => {
  await app.close();
  await pool.end();
  process.exit(0);
};
process.once('SIGTERM', close);
process.once('SIGINT', close);

await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 4950) });
