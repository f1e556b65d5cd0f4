// Issue 6: bad input at volume. A bounded fast-check run against the running server (a real loopback port, real HTTP
// through node:http, support/fuzz/http.ts): for every operation of openapi.yaml, requests generated from the contract
// (path parameters, query strings, bodies valid and mutated, raw bodies, wrong content types, version alternatives)
// from an anonymous caller, a USER, an ADMIN and a bad credential; and GraphQL documents generated from schema.graphql plus garbage. Every answer
// is below 500 and in its documented shape; afterwards the server is still alive and ready and logged no error.
// Reproduce a failure with FUZZ_SEED=<seed printed in the failure>; FUZZ_RUNS scales the number of requests.
// Bodies over 1 MiB are left out (the server answers 413 and closes while the client may still be writing, a race that
// fails the client's write, not the server); the 413 itself is covered by rest/failures.test.ts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import fc from 'fast-check';
import pino from 'pino';
import path from 'node:path';
import { repoRoot } from '../../src/paths.js';
import { createAccount, TEST_PASSWORD, type Account } from '../support/accounts.js';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import { createTestApp } from '../support/app.js';
import { testConfig } from '../support/config.js';
import { Contract } from '../support/contract.js';
import { seedUsersWithPosts } from '../support/fixtures.js';
import { graphqlProblems, restProblems } from '../support/fuzz/envelopes.js';
import { graphqlRequest, type GraphQLRequest } from '../support/fuzz/graphql-requests.js';
import { send, type HttpResult } from '../support/fuzz/http.js';
import { contractOperations } from '../support/fuzz/operations.js';
import { reachesOperation, restRequest, target, type Caller, type IdPools, type RestRequest } from '../support/fuzz/rest-requests.js';

const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const scale = Number(process.env.FUZZ_RUNS ?? 1);
const REST_RUNS_PER_OPERATION = Math.round(25 * scale);
const GRAPHQL_RUNS = Math.round(400 * scale);

const contract = new Contract();
const operations = contractOperations();

let app: FastifyInstance;
let base: string;
let user: Account;
let admin: Account;
/** Logs out (maybe of every device) on each logout case, so the accounts above keep their tokens. */
let leaver: Account;
const pools: IdPools = {};
let victims: number[] = [];
/** Log lines at level error or above, and anything that escaped as an uncaught exception or unhandled rejection. */
const errorLogs: string[] = [];
const escaped: unknown[] = [];
const onEscape = (error: unknown) => void escaped.push(error);

beforeAll(async () => {
  // High limits: a 429 is a valid answer, but it would stop the handlers from ever seeing most of the input.
  app = await createTestApp({
    logLevel: 'error',
    persistedDocuments: { file: path.join(repoRoot, 'packages/client/persisted-documents.json'), trustedOnly: false },
    // Mail configured (to an outbox in a temporary directory): a server that cannot send it answers 503 by design.
    mail: { ...testConfig().mail, outboxDir: mkdtempSync(path.join(os.tmpdir(), 'fuzz-outbox-')) },
    defaultRateLimit: { max: 1_000_000, windowMs: 60_000 },
    rateLimits: {
      loginMax: 1_000_000,
      refreshMax: 1_000_000,
      loginIpMax: 1_000_000,
      loginAccount: { max: 1_000_000, windowMs: 60_000 },
      signup: { max: 1_000_000, windowMs: 60_000 },
    },
  });
  (app.log as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] = { write: (line: string) => void errorLogs.push(summary(line)) };
  process.on('uncaughtException', onEscape);
  process.on('unhandledRejection', onEscape);

  const fixture = await seedUsersWithPosts(app.db.prisma, 12, 2);
  // The callers' ids are far from the sequence (and from the edge values fast-check favours), so random ids never hit
  // them; ids picked from the pools do, and guard() below keeps those requests from deleting or demoting the callers.
  user = await createAccount(app, 'fuzz-user@example.com', 'USER', 1_000_000_007);
  admin = await createAccount(app, 'fuzz-admin@example.com', 'ADMIN', 1_000_000_009);
  leaver = await createAccount(app, 'fuzz-leaver@example.com', 'USER', 1_000_000_011);
  const { prisma } = app.db;
  victims = fixture.users.map((row) => row.id);
  const orders = await Promise.all(
    victims.slice(0, 6).map((userId, index) => prisma.order.create({ data: { userId, product: `Thing ${index}`, quantity: 1, totalCents: 100 } })),
  );
  const own = await prisma.order.create({ data: { userId: user.id, product: 'Mine', quantity: 2, totalCents: 200 } });
  const comments = await Promise.all(
    fixture.posts.slice(0, 6).map((post) => prisma.comment.create({ data: { body: 'A comment', postId: post.id, authorId: user.id } })),
  );
  const key = (await app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: user.headers, payload: { name: 'fuzz' } })).json().data as {
    id: number;
  };
  Object.assign(pools, {
    users: [...victims, user.id, admin.id],
    posts: fixture.posts.map((post) => post.id),
    orders: [...orders.map((order) => order.id), own.id],
    comments: comments.map((comment) => comment.id),
    'api-keys': [key.id],
  });

  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address() as { port: number };
  base = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  process.off('uncaughtException', onEscape);
  process.off('unhandledRejection', onEscape);
  await app.close();
});

/** A log line as `msg: error message (where)`, short enough to read in a failure. */
function summary(line: string): string {
  const entry = JSON.parse(line) as { msg?: string; err?: { message?: string; stack?: string } };
  const where = entry.err?.stack
    ?.split('\n')
    .find((frame) => frame.includes('/apps/api/src/'))
    ?.trim();
  return `${entry.msg}: ${entry.err?.message ?? ''}${where ? ` (${where})` : ''}`;
}

const castIds = () => new Set([user.id, admin.id, leaver.id]);

/**
 * Keeps the callers' credentials working (the alternative, logging in again after every destructive case, would cost
 * an argon2 login per case): deleting a caller (by deleteUser, or by DELETE sent to another operation's path, seed
 * 1917808024) becomes deleting a seeded victim, a caller's role is never changed,
 * and a logout is done by the leaver's fresh token, never by the tokens the other cases use.
 */
function guard(request: RestRequest): RestRequest {
  const protectedIds = castIds();
  const replacement = String(victims[0]);
  const pathValues = { ...request.pathValues };
  const targetsCast = pathValues.id !== undefined && protectedIds.has(Number(pathValues.id.raw));
  // Any DELETE: the generator also sends other methods to an operation's path (a PUT's path with DELETE is deleteUser).
  if ((request.operation.operationId === 'deleteUser' || request.method === 'DELETE') && targetsCast)
    pathValues.id = { raw: replacement, encoded: replacement };
  const query = request.query.map(([key, value]): [string, string] =>
    key === 'ids'
      ? [
          key,
          value
            .split(/,|%2C/i)
            .map((id) => (protectedIds.has(Number(id)) ? replacement : id))
            .join(','),
        ]
      : [key, value],
  );
  let body = request.body;
  if (targetsCast && body.kind === 'json' && body.value !== null && typeof body.value === 'object' && 'role' in body.value) {
    const { role: _role, ...rest } = body.value as Record<string, unknown>;
    body = { ...body, value: rest };
  }
  return { ...request, pathValues, query, body };
}

async function credentialsOf(caller: Caller, operationId?: string): Promise<Record<string, string>> {
  if (caller === 'anonymous') return {};
  if (caller === 'garbage') return { authorization: 'Bearer not.a.token' };
  if (operationId === 'logout') {
    const login = await send(
      base,
      'POST',
      '/login',
      { 'content-type': 'application/json' },
      JSON.stringify({ email: leaver.email, password: TEST_PASSWORD }),
    );
    return { authorization: `Bearer ${(JSON.parse(login.text) as { accessToken: string }).accessToken}` };
  }
  return caller === 'admin' ? admin.headers : user.headers;
}

/** Sends the request; the problems of its answer, plus any error the server logged while handling it. */
async function exchange(
  send: () => Promise<HttpResult>,
  check: (response: HttpResult) => string[],
): Promise<{ response: HttpResult; problems: string[] }> {
  const logged = errorLogs.length;
  const response = await send();
  const problems = check(response);
  problems.push(...errorLogs.slice(logged).map((line) => `logged an error: ${line}`));
  return { response, problems };
}

/** Whether a path %-decodes (Fastify's router refuses one that does not, before any hook runs). */
function decodes(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

function report(method: string, url: string, response: HttpResult, problems: string[]): void {
  if (problems.length > 0)
    throw new Error(`${method} ${url} → ${response.status}\n  ${problems.join('\n  ')}\n  body: ${response.text.slice(0, 500)}`);
}

async function sendRest(generated: RestRequest): Promise<void> {
  const request = guard(generated);
  const { operation, method, body, version } = request;
  const headers: Record<string, string> = { ...(await credentialsOf(request.caller, operation.operationId)) };
  if (version.accept) headers.accept = version.accept;
  let payload: string | undefined;
  if (body.kind === 'json') {
    payload = JSON.stringify(body.value) ?? '';
    headers['content-type'] = body.contentType;
  } else if (body.kind === 'raw') {
    payload = body.text;
    if (body.contentType !== undefined) headers['content-type'] = body.contentType;
  }
  const url = target(request);
  const check = (answer: HttpResult) => {
    const problems = restProblems(operation.operationId, method, answer);
    // 413 and 415 can answer any operation sent a body (over 1 MiB, or in a media type it does not take), also one that
    // takes none; 400 (a path that does not %-decode), 414 (a path parameter over 100 characters) and 431 (headers over
    // 16 KiB) any request, before routing and so without the hooks that add the rate-limit headers. The contract
    // documents them once, in its table of error codes; the envelope is checked above.
    const beforeRouting = [414, 431].includes(answer.status) || (answer.status === 400 && !decodes(url.split('?')[0]!));
    if (problems.length === 0 && reachesOperation(request) && !beforeRouting && answer.status !== 413 && answer.status !== 415) {
      problems.push(...contract.check(operation.operationId, { statusCode: answer.status, headers: answer.headers, body: answer.text }));
    }
    return problems;
  };
  const { response, problems } = await exchange(() => send(base, method, url, headers, payload), check);
  report(method, url, response, problems);
}

async function sendGraphQL(request: GraphQLRequest): Promise<void> {
  const headers = { ...request.headers, ...(await credentialsOf(request.caller)) };
  const { response, problems } = await exchange(() => send(base, request.method, request.target, headers, request.body), graphqlProblems);
  report(request.method, request.target.slice(0, 300), response, problems);
}

const settings = (numRuns: number) => ({ seed, numRuns });

describe(`fuzz (seed ${seed})`, () => {
  describe.each(operations.map((operation) => [operation.operationId, operation] as const))('REST %s', (_, operation) => {
    it(`${REST_RUNS_PER_OPERATION} generated requests: each below 500 and as the contract documents it`, async () => {
      await fc.assert(fc.asyncProperty(restRequest(operation, pools), sendRest), settings(REST_RUNS_PER_OPERATION));
    }, 120_000);
  });

  it(`GraphQL: ${GRAPHQL_RUNS} generated documents and transports, each below 500 with SPEC §2 error codes`, async () => {
    await fc.assert(
      fc.asyncProperty(graphqlRequest({ User: pools.users!, Post: pools.posts!, deletable: victims }), sendGraphQL),
      settings(GRAPHQL_RUNS),
    );
  }, 120_000);

  it('leaves the server alive and ready, the callers logged in, and nothing logged as an error', async () => {
    for (const probe of ['/healthz', '/readyz']) expect((await send(base, 'GET', probe, {})).status).toBe(200);
    for (const account of [user, admin]) expect((await send(base, 'GET', '/api/v1/api-keys', account.headers)).status).toBe(200);
    expect(escaped).toEqual([]);
    expect([...new Set(errorLogs)]).toEqual([]);
  });
});
