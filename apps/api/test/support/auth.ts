// Identity helpers for tests: users with a password, logins through POST /login, signed requests, and the 401 shape.
import { expect } from '@jest/globals';
import type { Role } from '@users-posts/db';
import { createTestDatabase } from '@users-posts/db/testing';
import type { FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { randomUUID } from 'node:crypto';
import { buildApp } from '../../src/app.js';
import type { Clock } from '../../src/auth/clock.js';
import { hashPassword } from '../../src/auth/credentials/passwords.js';
import { sign } from '../../src/auth/credentials/signature.js';
import { testConfig, type TestConfigOverrides } from './config.js';

export const PASSWORD = 'correct horse battery staple';

/** The real app on an isolated test database, with an optional hand-moved clock. */
export async function createAuthTestApp(
  options: { clock?: Clock; config?: TestConfigOverrides; logDestination?: DestinationStream } = {},
): Promise<FastifyInstance> {
  return buildApp(testConfig(options.config), {
    database: await createTestDatabase(),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.logDestination ? { logDestination: options.logDestination } : {}),
  });
}

export interface TestUser {
  id: number;
  email: string;
  password: string;
}

/** A user with a password (argon2id, as the server stores it), written straight through Prisma. */
export async function createUser(app: FastifyInstance, fields: { email: string; name?: string; role?: Role; password?: string }): Promise<TestUser> {
  const password = fields.password ?? PASSWORD;
  const user = await app.db.prisma.user.create({
    data: {
      name: fields.name ?? fields.email.split('@')[0]!,
      email: fields.email.toLowerCase(),
      role: fields.role ?? 'USER',
      passwordHash: await hashPassword(password),
    },
  });
  return { id: user.id, email: user.email, password };
}

export function login(app: FastifyInstance, body: Record<string, unknown>, remoteAddress?: string) {
  return app.inject({ method: 'POST', url: '/login', payload: body, ...(remoteAddress ? { remoteAddress } : {}) });
}

/** Logs `user` in through POST /login and returns the access token. */
export async function accessTokenOf(app: FastifyInstance, user: TestUser): Promise<string> {
  const response = await login(app, { email: user.email, password: user.password });
  expect(response.statusCode).toBe(200);
  return (response.json() as { accessToken: string }).accessToken;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export interface SignOptions {
  /** Unix milliseconds; defaults to now. */
  timestamp?: number;
  nonce?: string;
  secret?: string;
}

/**
 * `url` with `timestamp`, `nonce` and a valid `signature` appended, signed over `body` exactly as it will be sent.
 * Returns the nonce too, so a test can reuse it.
 */
export function signedUrl(app: FastifyInstance, method: string, url: string, body?: string, options: SignOptions = {}) {
  const nonce = options.nonce ?? randomUUID();
  const timestamp = options.timestamp ?? Date.now();
  const unsigned = `${url}${url.includes('?') ? '&' : '?'}timestamp=${timestamp}&nonce=${encodeURIComponent(nonce)}`;
  const signature = sign(options.secret ?? app.config.secrets.signing, method, unsigned, body);
  return { url: `${unsigned}&signature=${signature}`, unsigned, signature, nonce, timestamp };
}

/** The documented 401: status, code 40100, and the `error` string next to `message`. */
export function expectUnauthenticated(response: { statusCode: number; json: () => unknown }): void {
  expect(response.statusCode).toBe(401);
  expect(response.json()).toEqual({ code: 40100, message: expect.any(String), error: expect.any(String) });
}

export function expectForbidden(response: { statusCode: number; json: () => unknown }): void {
  expect(response.statusCode).toBe(403);
  expect(response.json()).toEqual({ code: 40300, message: expect.any(String) });
}
