// Test accounts: a user with a password written through Prisma, logged in through the real POST /login.
import type { FastifyInstance } from 'fastify';
import { hashPassword } from '../../src/auth/credentials/passwords.js';

export const TEST_PASSWORD = 'password-123';

export interface Account {
  id: number;
  email: string;
  token: string;
  headers: { authorization: string };
}

/** `id` pins the user's id (default: the next of the sequence). */
export async function createAccount(app: FastifyInstance, email: string, role: 'ADMIN' | 'USER' = 'USER', id?: number): Promise<Account> {
  const user = await app.db.prisma.user.create({
    data: { ...(id ? { id } : {}), name: email.split('@')[0]!, email, role, passwordHash: await hashPassword(TEST_PASSWORD) },
  });
  const login = await app.inject({ method: 'POST', url: '/login', payload: { email, password: TEST_PASSWORD } });
  const token = login.json().accessToken as string;
  return { id: user.id, email, token, headers: { authorization: `Bearer ${token}` } };
}

/** The usual cast of a test file: two users and an administrator, each logged in. */
export async function createCast(app: FastifyInstance): Promise<{ alice: Account; bob: Account; admin: Account }> {
  return {
    alice: await createAccount(app, 'alice@example.com'),
    bob: await createAccount(app, 'bob@example.com'),
    admin: await createAccount(app, 'admin@example.com', 'ADMIN'),
  };
}
