// One rule, every path (SPEC §0.1, issue 39): each account rule — recent login, the e-mail change's notice and
// verification, the last ADMIN, the password policy, the field rules — walked through the single write, the bulk and
// batch writes, both doors where they exist and the entries that make users, with the same verdict required of each.
// The writes are enumerated from the contracts (support/write-operations.ts), and which rule applies to which write is
// read from what its input carries (an `email` on a change, a `role`, a `password`): a write no walk below covers
// fails, named, and so does a walk of a write that is gone.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { weakPasswordReason } from '../../src/auth/password-policy.js';
import { loadConfig } from '../../src/config/config.js';
import { ErrorKinds } from '../../src/errors/app-error.js';
import { createCast, createAccount, type Account } from '../support/accounts.js';
import { createTestApp } from '../support/app.js';
import { bearer, createUser } from '../support/auth.js';
import { boundCases, fieldsOf, meetsBounds, type BoundCase } from '../support/contract-values.js';
import type { GraphQLResponse } from '../support/graphql.js';
import { LocalOidcProvider } from '../support/oidc.js';
import { SmtpSink, tokenIn, type ReceivedMail } from '../support/smtp.js';
import { graphqlMutations, modelWrites, restOperations, uncoveredAndVanished, type ContractOperation } from '../support/write-operations.js';

// ── the verdict of a write, the same shape on both doors ──

interface FieldError {
  field: string;
  message: string;
}
type Verdict = { accepted: true } | { accepted: false; kind: string; message: string; fields?: FieldError[] };

const KINDS = Object.entries(ErrorKinds) as [string, { code: number; graphqlCode: string; reason?: string; message: string }][];

function restVerdict(response: LightMyRequestResponse): Verdict {
  if (response.statusCode < 300) return { accepted: true };
  const body = response.json() as { code: number; message: string; errors?: FieldError[] };
  const kind = KINDS.find(([, entry]) => entry.code === body.code)?.[0] ?? `HTTP ${response.statusCode}`;
  return { accepted: false, kind, message: body.message, ...(body.errors ? { fields: body.errors } : {}) };
}

/** GraphQL names a kind by its code, its reason and, among kinds that share both, its words. */
function graphqlVerdict(result: GraphQLResponse): Verdict {
  const error = result.errors?.[0];
  if (!error) return { accepted: true };
  const { code, reason, fields } = (error.extensions ?? {}) as { code?: string; reason?: string; fields?: FieldError[] };
  const candidates = KINDS.filter(([, entry]) => entry.graphqlCode === code && entry.reason === reason);
  const kind = candidates.find(([, entry]) => entry.message === error.message) ?? candidates.find(([name]) => name === code) ?? candidates[0];
  return { accepted: false, kind: kind?.[0] ?? String(code), message: error.message, ...(fields ? { fields } : {}) };
}

/** A verdict as the single write would give it: field paths without the form's prefix (`data.`, `users[1].`), sorted. */
function comparable(verdict: Verdict, prefix: string): Verdict {
  if (verdict.accepted || !verdict.fields) return verdict;
  const fields = verdict.fields
    .map(({ field, message }) => ({ field: field.startsWith(prefix) ? field.slice(prefix.length) : `(not under "${prefix}") ${field}`, message }))
    .sort((a, b) => `${a.field} ${a.message}`.localeCompare(`${b.field} ${b.message}`));
  return { ...verdict, fields };
}

// ── the app, its cast and its mail ──

let smtp: SmtpSink;
let app: FastifyInstance;
let alice: Account;
let admin: Account;
const MAIL_FROM = 'Users & Posts <no-reply@users-posts.test>';

beforeAll(async () => {
  smtp = await SmtpSink.start();
  app = await createTestApp({
    mail: { smtpUrl: smtp.url, from: MAIL_FROM, publicUrl: 'https://app.users-posts.test' },
    defaultRateLimit: { max: 100_000, windowMs: 60_000 },
    rateLimits: { signup: { max: 100_000, windowMs: 3_600_000 }, loginMax: 1000, loginIpMax: 1000 },
  });
  ({ alice, admin } = await createCast(app));
});
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

/** How a caller authenticates: headers (a Bearer token) or a query parameter (`api_key=…`). */
interface Credential {
  headers?: Record<string, string>;
  query?: string;
}
const bearerOf = (account: Account): Credential => ({ headers: account.headers });
const withQuery = (url: string, credential: Credential) => (credential.query ? `${url}${url.includes('?') ? '&' : '?'}${credential.query}` : url);

function send(
  target: FastifyInstance,
  method: 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  credential: Credential,
  payload?: unknown,
): Promise<LightMyRequestResponse> {
  return target.inject({
    method,
    url: withQuery(url, credential),
    headers: credential.headers ?? {},
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

async function gql(target: FastifyInstance, credential: Credential, query: string, variables: Record<string, unknown>): Promise<GraphQLResponse> {
  const response = await target.inject({
    method: 'POST',
    url: withQuery('/graphql', credential),
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...credential.headers },
    payload: { query, variables },
  });
  return { status: response.statusCode, ...(response.json() as Omit<GraphQLResponse, 'status'>) };
}

const UPDATE_USER = 'mutation ($id: ID!, $input: UpdateUserInput!) { updateUser(id: $id, input: $input) { id } }';
const CREATE_USER = 'mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }';
const DELETE_USER = 'mutation ($id: ID!) { deleteUser(id: $id) }';
const CREATE_POST =
  'mutation ($title: String!, $content: String!, $authorId: ID!) { createPost(title: $title, content: $content, authorId: $authorId) { id } }';

let serial = 0;
const unique = () => `parity${++serial}`;
/** Six letters in place of `parity`: each form's address its own, and exactly as long (a bound stays a bound). */
function tagged(value: unknown, tag: string): unknown {
  if (tag.length !== 'parity'.length) throw new Error(`tag "${tag}" must have 6 letters`);
  return typeof value === 'string' ? value.replace('parity', tag) : value;
}
const address = (tag: string) => `${tag}${++serial}@example.com`;

/** The mail, or a failure saying which did not come (mail leaves after the answer: the wait is for an event, bounded). */
async function arrival(waiting: Promise<ReceivedMail>, what: string): Promise<ReceivedMail> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} never arrived`)), 10_000);
  });
  try {
    return await Promise.race([waiting, bound]);
  } finally {
    clearTimeout(timer);
  }
}

/** What a user row is now (read straight from the database: what a refused write must have left as it was). */
const rowOf = (target: FastifyInstance, id: number) =>
  target.db.prisma.user.findUnique({ where: { id }, select: { email: true, name: true, age: true, role: true, emailVerifiedAt: true } });

// ── rule: recent login (SPEC §3.2) ──

interface Caller {
  id: number;
  credential: Credential;
}
type RecentLoginForm = (caller: Caller, change: { name: string; email: string }) => Promise<Verdict>;

/** One's own e-mail changed, or a key minted: what an old login (an API key is never recent) may not do, on any path. */
const recentLoginForms: Record<string, RecentLoginForm> = {
  'REST updateUser': async (caller, change) => restVerdict(await send(app, 'PATCH', `/api/v1/users/${caller.id}`, caller.credential, change)),
  'REST replaceUser': async (caller, change) => restVerdict(await send(app, 'PUT', `/api/v1/users/${caller.id}`, caller.credential, change)),
  'REST bulkUpdateUsers': async (caller, change) =>
    restVerdict(await send(app, 'PATCH', '/api/v1/users', caller.credential, { ids: [caller.id], data: change })),
  'GraphQL updateUser': async (caller, change) =>
    graphqlVerdict(await gql(app, caller.credential, UPDATE_USER, { id: String(caller.id), input: change })),
  'REST createApiKey': async (caller, change) => restVerdict(await send(app, 'POST', '/api/v1/api-keys', caller.credential, { name: change.name })),
};

describe('recent login: an ADMIN whose login is not recent (an API key) changes its own e-mail or mints a key', () => {
  let keyed: { account: Account; key: string };

  beforeAll(async () => {
    const account = await createAccount(app, 'keyed-admin@example.com', 'ADMIN');
    const created = await send(app, 'POST', '/api/v1/api-keys', bearerOf(account), { name: 'automation' });
    expect(created.statusCode).toBe(201);
    keyed = { account, key: created.json().data.key as string };
  });

  it.each(Object.keys(recentLoginForms))('%s: refused with 40301 (REAUTHENTICATION_REQUIRED), nothing changed', async (key) => {
    const before = { user: await rowOf(app, keyed.account.id), keys: await app.db.prisma.apiKey.count() };
    const verdict = await recentLoginForms[key]!(
      { id: keyed.account.id, credential: { query: `api_key=${keyed.key}` } },
      { name: 'Taken Over', email: address('stolen') },
    );
    expect({ key, verdict }).toEqual({
      key,
      verdict: { accepted: false, kind: 'REAUTHENTICATION_REQUIRED', message: ErrorKinds.REAUTHENTICATION_REQUIRED.message },
    });
    expect({ user: await rowOf(app, keyed.account.id), keys: await app.db.prisma.apiKey.count() }).toEqual(before);
  });

  it.each(Object.keys(recentLoginForms))('%s: the same ADMIN signed in a moment ago may', async (key) => {
    const change = { name: 'Keyed Admin', email: address('rcnt01') };
    const verdict = await recentLoginForms[key]!({ id: keyed.account.id, credential: bearerOf(keyed.account) }, change);
    expect({ key, verdict }).toEqual({ key, verdict: { accepted: true } });
  });
});

// ── rule: a change of e-mail mails a notice to the old address and a verification to the new one (SPEC §3.2) ──

type EmailChangeForm = (target: { id: number; name: string }, email: string) => Promise<Verdict>;

/** An ADMIN (signed in a moment ago) moves another user's address. */
const emailChangeForms: Record<string, EmailChangeForm> = {
  'REST updateUser': async (target, email) => restVerdict(await send(app, 'PATCH', `/api/v1/users/${target.id}`, bearerOf(admin), { email })),
  'REST replaceUser': async (target, email) =>
    restVerdict(await send(app, 'PUT', `/api/v1/users/${target.id}`, bearerOf(admin), { name: target.name, email })),
  'REST bulkUpdateUsers': async (target, email) =>
    restVerdict(await send(app, 'PATCH', '/api/v1/users', bearerOf(admin), { ids: [target.id], data: { email } })),
  'GraphQL updateUser': async (target, email) =>
    graphqlVerdict(await gql(app, bearerOf(admin), UPDATE_USER, { id: String(target.id), input: { email } })),
};

/** The verification mail's link works: the address is proved, as after a sign-up. */
async function expectVerifies(mail: ReceivedMail, userId: number, what: string): Promise<void> {
  const verified = await app.inject({ method: 'POST', url: '/auth/email/verify', payload: { token: tokenIn(mail) } });
  expect({ what, status: verified.statusCode }).toEqual({ what, status: 204 });
  expect({ what, verified: (await rowOf(app, userId))?.emailVerifiedAt !== null }).toEqual({ what, verified: true });
}

describe('a change of e-mail: the old address is told, the new one is to be verified, the old proof is dropped', () => {
  it.each(Object.keys(emailChangeForms))('%s', async (key) => {
    const target = await createUser(app, { email: address('moving'), name: 'Mover' });
    await app.db.prisma.user.update({ where: { id: target.id }, data: { emailVerifiedAt: new Date() } });
    const next = address('moved1');
    const notice = smtp.next(target.email);
    const verification = smtp.next(next);

    const verdict = await emailChangeForms[key]!({ id: target.id, name: 'Mover' }, next);
    expect({ key, verdict }).toEqual({ key, verdict: { accepted: true } });
    expect({ key, row: await rowOf(app, target.id) }).toMatchObject({ key, row: { email: next, emailVerifiedAt: null } });

    const told = await arrival(notice, `${key}: the notice to the old address`);
    expect({ key, noticeCarriesNoToken: !/#token=/.test(told.text) }).toEqual({ key, noticeCarriesNoToken: true });
    await expectVerifies(await arrival(verification, `${key}: the verification to the new address`), target.id, key);
  });
});

// ── rule: a new account's address is to be verified (SPEC §3.2) ──

/** Makes one account of `user` (a sign-up on either door, or a batch of one by an ADMIN). */
type SignUpForm = (user: Record<string, unknown>) => Promise<Verdict>;

const signUpForms: Record<string, SignUpForm> = {
  'REST createUser': async (user) => restVerdict(await send(app, 'POST', '/api/v1/users', {}, user)),
  'GraphQL createUser': async (user) => graphqlVerdict(await gql(app, {}, CREATE_USER, { input: user })),
  'REST batchCreateUsers': async (user) => restVerdict(await send(app, 'POST', '/api/v1/users/batch', bearerOf(admin), { users: [user] })),
};

describe('a new account: its address gets a verification mail, whichever write made it', () => {
  it.each(Object.keys(signUpForms))('%s', async (key) => {
    const email = address('signup');
    const verification = smtp.next(email);
    expect({ key, verdict: await signUpForms[key]!({ name: 'Newcomer', email }) }).toEqual({ key, verdict: { accepted: true } });
    const { id } = await app.db.prisma.user.findUniqueOrThrow({ where: { email }, select: { id: true } });
    await expectVerifies(await arrival(verification, `${key}: the verification to the new address`), id, key);
  });
});

// ── rule: the last ADMIN (SPEC §3.2) ──

// An app of its own, with one ADMIN and one USER.
let lone: FastifyInstance;
let only: Account;
let user: Account;

const lastAdminForms: Record<string, () => Promise<Verdict>> = {
  'REST updateUser': async () => restVerdict(await send(lone, 'PATCH', `/api/v1/users/${only.id}`, bearerOf(only), { role: 'USER' })),
  'REST replaceUser': async () =>
    restVerdict(await send(lone, 'PUT', `/api/v1/users/${only.id}`, bearerOf(only), { name: 'only-admin', email: only.email, role: 'USER' })),
  'GraphQL updateUser': async () => graphqlVerdict(await gql(lone, bearerOf(only), UPDATE_USER, { id: String(only.id), input: { role: 'USER' } })),
  // With a USER beside, whose change must not land either (all or nothing).
  'REST bulkUpdateUsers': async () =>
    restVerdict(await send(lone, 'PATCH', '/api/v1/users', bearerOf(only), { ids: [only.id, user.id], data: { role: 'USER', age: 77 } })),
  'REST deleteUser': async () => restVerdict(await send(lone, 'DELETE', `/api/v1/users/${only.id}`, bearerOf(only))),
  'REST bulkDeleteUsers': async () => restVerdict(await send(lone, 'DELETE', `/api/v1/users?ids=${only.id},${user.id}`, bearerOf(only))),
  'GraphQL deleteUser': async () => graphqlVerdict(await gql(lone, bearerOf(only), DELETE_USER, { id: String(only.id) })),
};

describe('the last ADMIN: demoted or deleted on any path → 409 40902, nothing changed', () => {
  beforeAll(async () => {
    lone = await createTestApp();
    only = await createAccount(lone, 'only-admin@example.com', 'ADMIN');
    user = await createAccount(lone, 'plain-user@example.com');
  });
  afterAll(() => lone?.close());

  it.each(Object.keys(lastAdminForms))('%s', async (key) => {
    const before = { only: await rowOf(lone, only.id), user: await rowOf(lone, user.id) };
    const verdict = await lastAdminForms[key]!();
    expect({ key, verdict }).toEqual({ key, verdict: { accepted: false, kind: 'LAST_ADMIN', message: ErrorKinds.LAST_ADMIN.message } });
    expect({ key, after: { only: await rowOf(lone, only.id), user: await rowOf(lone, user.id) } }).toEqual({ key, after: before });
  });
});

// ── the ADMIN from the environment: started as `main.ts` starts it (its configuration read by loadConfig) ──

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'users-posts-write-paths-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Starts an app with ADMIN_EMAIL / ADMIN_PASSWORD: the app, or why the start was refused. */
async function bootstrapAdmin(email: unknown, password: unknown): Promise<{ app: FastifyInstance } | { refused: string }> {
  let admin: { email: string; password: string } | undefined;
  try {
    admin = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ADMIN_EMAIL: String(email), ADMIN_PASSWORD: String(password) }).admin;
  } catch (error) {
    return { refused: `configuration: ${(error as Error).message}` };
  }
  const started = await createTestApp({ admin });
  try {
    await started.ready();
    return { app: started };
  } catch (error) {
    await started.close().catch(() => undefined);
    return { refused: `start: ${(error as Error).message}` };
  }
}

/** Whether the started app's ADMIN logs in with `password` and reads back `email` (lower-cased) and its role. */
async function bootstrappedAdminKept(started: FastifyInstance, email: string, password: string) {
  const login = await started.inject({ method: 'POST', url: '/login', payload: { email, password } });
  if (login.statusCode !== 200) return { login: login.statusCode };
  const token = login.json().accessToken as string;
  const userId = (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { userId: number }).userId;
  const read = (await started.inject({ method: 'GET', url: `/api/v1/users/${userId}`, headers: bearer(token) })).json().data;
  return { login: 200, email: read.email as string, role: read.role as string };
}

// ── rule: the password policy (SPEC §3.2) ──

type PolicyForm = (user: { name: string; email: string; password: string }) => Promise<{ verdict: Verdict; prefix: string; emails: string[] }>;

/** Each form that sets a password: its verdict, and the addresses whose accounts must not exist after a refusal. */
const policyForms: Record<string, PolicyForm> = {
  'REST createUser': async (user) => ({ verdict: await signUpForms['REST createUser']!(user), prefix: '', emails: [user.email] }),
  'GraphQL createUser': async (user) => ({ verdict: await signUpForms['GraphQL createUser']!(user), prefix: '', emails: [user.email] }),
  'REST batchCreateUsers': async (user) => {
    const first = { name: 'First Of Batch', email: address('first1') };
    const response = await send(app, 'POST', '/api/v1/users/batch', bearerOf(admin), { users: [first, user] });
    return { verdict: restVerdict(response), prefix: 'users[1].', emails: [first.email, user.email] };
  },
};

describe('the password policy: a common password, or the e-mail as password, refused on every write that sets one', () => {
  const cases = [
    { what: 'a commonly used password', password: () => 'password123' },
    { what: "the e-mail's local part", password: (email: string) => email.split('@')[0]! },
    { what: 'the e-mail address itself', password: (email: string) => email },
  ];

  it.each(cases)('$what: the same refusal, naming the password, through every sign-up write; nothing created', async ({ password }) => {
    const observed: Record<string, Verdict> = {};
    for (const [key, form] of Object.entries(policyForms)) {
      const email = `longlocal${++serial}@example.com`;
      const { verdict, prefix, emails } = await form({ name: 'Weak', email, password: password(email) });
      observed[key] = comparable(verdict, prefix);
      expect({ key, created: await app.db.prisma.user.count({ where: { email: { in: emails } } }) }).toEqual({ key, created: 0 });
    }
    const expected = observed['REST createUser']!;
    expect(expected).toMatchObject({ accepted: false, kind: 'VALIDATION_FAILED', fields: [{ field: 'password' }] });
    expect(observed).toEqual(Object.fromEntries(Object.keys(policyForms).map((key) => [key, expected])));
  });

  it.each(cases)('$what as ADMIN_PASSWORD: the start is refused, no ADMIN made with it', async ({ password }) => {
    const email = `longlocal${++serial}@example.com`;
    const outcome = await bootstrapAdmin(email, password(email));
    if ('app' in outcome) {
      const kept = await bootstrappedAdminKept(outcome.app, email, password(email));
      await outcome.app.close();
      expect({ started: true, kept }).toEqual({ started: false });
    }
  });
});

// ── rule: the field rules (SPEC §1), through every write that takes the field ──

interface WalkForm {
  /** How the form names a failing field: '', `data.`, `users[1].`. */
  prefix: string;
  /** Six letters that stand for `parity` in this form's addresses (support/contract-values.ts draws them with it). */
  tag: string;
  /** Sends `field: value` in an otherwise valid input. */
  send(field: string, value: unknown, tag: string): Promise<Verdict>;
}

interface FieldWalk {
  /** The contract's input schema whose fields are walked. */
  schema: string;
  /** Fields walked elsewhere, and why. */
  skip?: readonly string[];
  /** The single write first: the others must give its verdict. */
  forms: Record<string, WalkForm>;
}

/** A user per form, for the changes (so that one form's address never meets another's). */
const targets = new Map<string, number>();
async function targetOf(tag: string): Promise<number> {
  let id = targets.get(tag);
  if (id === undefined) {
    id = (await createUser(app, { email: `${tag}-target@example.com`, name: 'Target' })).id;
    targets.set(tag, id);
  }
  return id;
}

let postId: number | undefined;
async function aPost(): Promise<number> {
  return (postId ??= (await app.db.prisma.post.create({ data: { title: 'Commented', content: 'On it', authorId: alice.id } })).id);
}

let orderId: number | undefined;
async function anOrder(): Promise<number> {
  return (orderId ??= (await app.db.prisma.order.create({ data: { userId: alice.id, product: 'Widget', quantity: 1, totalCents: 100 } })).id);
}

const userFields = (field: string, value: unknown, tag: string) => ({ [field]: field === 'email' ? tagged(value, tag) : value });

const FIELD_WALKS: FieldWalk[] = [
  {
    schema: 'UpdateUserInput',
    // Who may set a role and the last ADMIN are walked above; GraphQL's enum refuses another value before the domain.
    skip: ['role'],
    forms: {
      'REST updateUser': {
        prefix: '',
        tag: 'rpatch',
        send: async (field, value, tag) =>
          restVerdict(await send(app, 'PATCH', `/api/v1/users/${await targetOf(tag)}`, bearerOf(admin), userFields(field, value, tag))),
      },
      'REST replaceUser': {
        prefix: '',
        tag: 'rputxx',
        send: async (field, value, tag) =>
          restVerdict(
            await send(app, 'PUT', `/api/v1/users/${await targetOf(tag)}`, bearerOf(admin), {
              name: 'Target',
              email: `${tag}-target@example.com`,
              ...userFields(field, value, tag),
            }),
          ),
      },
      'GraphQL updateUser': {
        prefix: '',
        tag: 'gpatch',
        send: async (field, value, tag) =>
          graphqlVerdict(await gql(app, bearerOf(admin), UPDATE_USER, { id: String(await targetOf(tag)), input: userFields(field, value, tag) })),
      },
      'REST bulkUpdateUsers': {
        prefix: 'data.',
        tag: 'rbulkx',
        send: async (field, value, tag) =>
          restVerdict(
            await send(app, 'PATCH', '/api/v1/users', bearerOf(admin), { ids: [await targetOf(tag)], data: userFields(field, value, tag) }),
          ),
      },
    },
  },
  {
    schema: 'CreateUserInput',
    forms: {
      'REST createUser': {
        prefix: '',
        tag: 'rsignx',
        send: (field, value, tag) => signUpForms['REST createUser']!({ name: 'Parity', email: address(tag), ...userFields(field, value, tag) }),
      },
      'GraphQL createUser': {
        prefix: '',
        tag: 'gsignx',
        send: (field, value, tag) => signUpForms['GraphQL createUser']!({ name: 'Parity', email: address(tag), ...userFields(field, value, tag) }),
      },
      'REST batchCreateUsers': {
        prefix: 'users[1].',
        tag: 'rbatch',
        send: async (field, value, tag) => {
          const first = { name: 'First Of Batch', email: address('first2') };
          const user = { name: 'Parity', email: address(tag), ...userFields(field, value, tag) };
          const verdict = restVerdict(await send(app, 'POST', '/api/v1/users/batch', bearerOf(admin), { users: [first, user] }));
          // All or nothing: a refused batch leaves its valid first user unmade.
          if (!verdict.accepted)
            expect({ madeDespiteRefusal: await app.db.prisma.user.count({ where: { email: first.email } }) }).toEqual({ madeDespiteRefusal: 0 });
          return verdict;
        },
      },
    },
  },
  {
    schema: 'CreatePostInput',
    forms: {
      'REST createUserPost': {
        prefix: '',
        tag: 'rpostx',
        send: async (field, value) =>
          restVerdict(
            await send(app, 'POST', `/api/v1/users/${alice.id}/posts`, bearerOf(alice), {
              title: 'Parity',
              content: 'Parity content',
              [field]: value,
            }),
          ),
      },
      'GraphQL createPost': {
        prefix: '',
        tag: 'gpostx',
        send: async (field, value) =>
          graphqlVerdict(
            await gql(app, bearerOf(alice), CREATE_POST, { title: 'Parity', content: 'Parity content', [field]: value, authorId: String(alice.id) }),
          ),
      },
    },
  },
  {
    schema: 'CreateCommentInput',
    forms: {
      'REST createPostComment': {
        prefix: '',
        tag: 'rcomnt',
        send: async (field, value) =>
          restVerdict(await send(app, 'POST', `/api/v1/posts/${await aPost()}/comments`, bearerOf(alice), { [field]: value })),
      },
    },
  },
  {
    schema: 'CreateOrderInput',
    forms: {
      'REST createUserOrder': {
        prefix: '',
        tag: 'rorder',
        send: async (field, value) =>
          restVerdict(
            await send(app, 'POST', `/api/v1/users/${alice.id}/orders`, bearerOf(alice), {
              product: 'Widget',
              quantity: 1,
              totalCents: 100,
              [field]: value,
            }),
          ),
      },
    },
  },
  {
    schema: 'UpdateOrderInput',
    forms: {
      'REST updateUserOrder': {
        prefix: '',
        tag: 'rorupd',
        send: async (field, value) =>
          restVerdict(await send(app, 'PATCH', `/api/v1/users/${alice.id}/orders/${await anOrder()}`, bearerOf(admin), { [field]: value })),
      },
    },
  },
  {
    schema: 'CreateApiKeyInput',
    forms: {
      'REST createApiKey': {
        prefix: '',
        tag: 'rkeyxx',
        send: async (field, value) => restVerdict(await send(app, 'POST', '/api/v1/api-keys', bearerOf(alice), { [field]: value })),
      },
    },
  },
];

/** The oracle: the bound the value was drawn from, and for a password the policy as well. */
const expectedValid = (field: string, entry: BoundCase, email?: string) =>
  entry.valid && (field !== 'password' || weakPasswordReason(String(entry.value), email) === undefined);

describe.each(FIELD_WALKS)(
  'field rules of $schema: the verdict of the bound, the same through every write that takes it',
  ({ schema, skip, forms }) => {
    const cases = Object.entries(fieldsOf(schema))
      .filter(([field]) => !skip?.includes(field))
      .flatMap(([field, fieldSchema]) => boundCases(field, fieldSchema, unique).map((entry) => ({ field, ...entry })));
    const keys = Object.keys(forms);

    it.each(cases)(`$what (${keys.join(', ')})`, async (entry) => {
      const { field } = entry;
      const observed: Record<string, Verdict> = {};
      for (const [key, form] of Object.entries(forms)) observed[key] = comparable(await form.send(field, entry.value, form.tag), form.prefix);
      const single = observed[keys[0]!]!;
      // The sign-ups' e-mail is never the walked password (all are `…@example.com` addresses of other letters).
      if (expectedValid(field, entry)) {
        expect(single).toEqual({ accepted: true });
      } else {
        expect(single).toMatchObject({ accepted: false, kind: 'VALIDATION_FAILED' });
        expect((single as { fields?: FieldError[] }).fields?.map((failure) => failure.field)).toContain(field);
      }
      expect(observed).toEqual(Object.fromEntries(keys.map((key) => [key, single])));
    });
  },
);

describe('field rules at the entries that make users outside the API: the claims and the environment meet sign-up’s rules', () => {
  const signUpFields = fieldsOf('CreateUserInput');

  describe('entry OIDC first login: a provider asserts name and e-mail', () => {
    let provider: LocalOidcProvider;
    let oidc: FastifyInstance;
    beforeAll(async () => {
      provider = await LocalOidcProvider.start();
      oidc = await createTestApp({ oauthProviders: [provider.providerConfig('local')] });
    });
    afterAll(async () => {
      await oidc?.close();
      await provider?.stop();
    });

    /** The whole first login with these claims; the callback's answer. */
    async function firstLogin(claims: Record<string, unknown>): Promise<LightMyRequestResponse> {
      provider.claims = claims;
      const started = await oidc.inject({ method: 'GET', url: '/auth/oauth/local/authorize' });
      const transaction = started.cookies.find((cookie) => cookie.name === 'oauth_tx')!.value;
      const redirect = await provider.authorize(started.headers.location as string);
      return oidc.inject({ method: 'GET', url: `${redirect.pathname}${redirect.search}`, cookies: { oauth_tx: transaction } });
    }

    const nameMax = signUpFields.name!.maxLength!;
    const cases = [
      ...(['name', 'email'] as const).flatMap((field) => boundCases(field, signUpFields[field]!, unique).map((entry) => ({ field, ...entry }))),
      // Over the bound by one character, where a cut counted in UTF-16 units would split the last emoji in two.
      { field: 'name' as const, what: `name: a letter and ${nameMax} emoji`, value: `a${'🙂'.repeat(nameMax)}`, valid: false },
    ];

    it.each(cases)('$what', async (entry) => {
      const { field } = entry;
      const email = field === 'email' ? tagged(entry.value, 'oidcxx') : address('oidcxx');
      const claimed = field === 'email' ? email : entry.value;
      const response = await firstLogin({ sub: unique(), email_verified: true, name: 'Parity', email, [field]: claimed });
      // No row can hold a NUL (PostgreSQL refuses it in text, and in a lookup too).
      const storable = typeof email === 'string' && !email.includes('\u0000');
      const stored = storable ? await oidc.db.prisma.user.findUnique({ where: { email: email.toLowerCase() } }) : null;
      const outcome = { status: response.statusCode, made: stored !== null };
      expect({ answeredWithoutAnInternalError: response.statusCode < 500 }).toEqual({ answeredWithoutAnInternalError: true });
      if (entry.valid) {
        expect(outcome).toEqual({ status: 200, made: true });
        const read = (await oidc.inject({ method: 'GET', url: `/api/v1/users/${stored!.id}`, headers: bearer(response.json().accessToken) })).json()
          .data;
        expect(read[field]).toBe(field === 'email' ? String(claimed).toLowerCase() : claimed);
      } else if (field === 'email' || !stored) {
        // An address breaking the rule makes no account and logs nobody in.
        expect({ refused: outcome.status !== 200, made: outcome.made }).toEqual({ refused: true, made: false });
      } else {
        // A name breaking the rule: refused, or normalised as the callback documents (openapi.yaml) into one that meets
        // it: never stored as claimed, and never cut inside a character (a lone surrogate, which storage turns into U+FFFD).
        const name = stored.name;
        const broken = [...name].some((character) => (character.length === 1 && /[\uD800-\uDFFF]/.test(character)) || character === '\uFFFD');
        expect({ meetsTheRule: meetsBounds(signUpFields.name!, name), cutInsideACharacter: broken }).toEqual({
          meetsTheRule: true,
          cutInsideACharacter: false,
        });
      }
    });
  });

  describe('entry ADMIN bootstrap: ADMIN_EMAIL and ADMIN_PASSWORD', () => {
    const cases = (['email', 'password'] as const).flatMap((field) =>
      boundCases(field, signUpFields[field]!, unique).map((entry) => ({ field, ...entry })),
    );

    it.each(cases)('$what', async (entry) => {
      const { field } = entry;
      const email = field === 'email' ? String(tagged(entry.value, 'bootxx')) : address('bootxx');
      const password = field === 'password' ? entry.value : 'a bootstrap passphrase';
      const outcome = await bootstrapAdmin(email, password);
      const started = 'app' in outcome;
      const kept = started ? await bootstrappedAdminKept(outcome.app, email, String(password)) : undefined;
      if (started) await outcome.app.close();
      if (expectedValid(field, entry, email)) {
        expect({ started, kept }).toEqual({ started: true, kept: { login: 200, email: email.toLowerCase(), role: 'ADMIN' } });
      } else {
        expect({ started, kept }).toEqual({ started: false, kept: undefined });
      }
    });
  });
});

// ── coverage: every write walked by every rule its input says applies to it ──

describe('coverage, derived from the contracts', () => {
  const everyOperation: ContractOperation[] = [...restOperations(), ...graphqlMutations()];
  const writes = modelWrites();
  const isEntry = (write: ContractOperation) => write.key.startsWith('entry ');

  /** Each rule: the writes it walks here, and the writes its definition says it applies to. */
  const rules = () => ({
    'field rules': {
      walked: [...FIELD_WALKS.flatMap((walk) => Object.keys(walk.forms)), 'entry OIDC first login', 'entry ADMIN bootstrap'],
      // Every write that takes more than the row's id.
      appliesTo: writes.filter((write) => write.inputs.some((input) => input !== 'id')),
    },
    'recent login for one’s own e-mail': {
      walked: Object.keys(recentLoginForms),
      appliesTo: writes.filter((write) => write.changesExisting && write.inputs.includes('email')),
    },
    'the e-mail change’s notice and verification': {
      walked: Object.keys(emailChangeForms),
      appliesTo: writes.filter((write) => write.changesExisting && write.inputs.includes('email')),
    },
    // The entries' addresses come verified (by the provider, by whoever sets the environment): no mail.
    'a new address is to be verified': {
      walked: Object.keys(signUpForms),
      appliesTo: writes.filter((write) => !write.changesExisting && write.inputs.includes('email') && !isEntry(write)),
    },
    'the last ADMIN': { walked: Object.keys(lastAdminForms), appliesTo: writes.filter((write) => write.inputs.includes('role')) },
    'the password policy': {
      walked: [...Object.keys(policyForms), 'entry ADMIN bootstrap'],
      appliesTo: writes.filter((write) => write.inputs.includes('password')),
    },
  });

  it('every write of the contracts (and every entry that makes users) is walked by some rule; no walk names one that is gone', () => {
    const walked = Object.values(rules()).flatMap((rule) => rule.walked);
    expect(uncoveredAndVanished(walked, writes, everyOperation)).toEqual({ uncovered: [], vanished: [] });
  });

  it('each rule walks every write it applies to', () => {
    const gaps = Object.fromEntries(
      Object.entries(rules()).map(([rule, { walked, appliesTo }]) => [rule, uncoveredAndVanished(walked, appliesTo, [...everyOperation, ...writes])]),
    );
    const none = Object.fromEntries(Object.keys(gaps).map((rule) => [rule, { uncovered: [], vanished: [] }]));
    expect(gaps).toEqual(none);
  });
});
