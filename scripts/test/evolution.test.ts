// Issue 41: the gate's evolution rules on edited contracts in a temporary repository: a deprecation needs a sunset
// date, a removal waits for it, usage (the usage file and the trusted documents) decides what a break costs, and
// contracts/approvals.yaml lets a named change through until it expires.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from '@jest/globals';
import { parseYaml, stringifyYaml } from '../contracts/yaml.js';
import { changelog } from '../contracts/changelog.js';
import { checkEvolution, graphqlSunsetProblems, openapiSunsetProblems, utcDay, type UsageFile } from '../contracts/evolution.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/breaking');
const baseSdl = readFileSync(path.join(fixtures, 'schema.graphql'), 'utf8');
const baseDoc = readFileSync(path.join(fixtures, 'openapi.yaml'), 'utf8');
const today = utcDay();
const PAST = '2000-01-01';
const FUTURE = '2999-01-01';

function editSdl(sdl: string, from: string, to: string): string {
  expect(sdl.split(from)).toHaveLength(2);
  return sdl.replace(from, to);
}
// The fixtures are edited freely as plain objects.
function editDoc(doc: string, change: (doc: any) => void): string {
  const parsed: any = parseYaml(doc);
  change(parsed);
  return stringifyYaml(parsed);
}

const tmpDirs: string[] = [];
afterAll(() => tmpDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/**
 * A repository whose one commit holds `base` (the two fixture contracts by default), with `head` written over it
 * uncommitted, and `extra` files (approvals, usage, the trusted documents) in the working tree.
 */
function repo(options: { base?: { sdl?: string; doc?: string }; head?: { sdl?: string; doc?: string }; extra?: Record<string, string> }): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'evolution-'));
  tmpDirs.push(dir);
  const write = (file: string, content: string) => {
    mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  };
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false', ...args], {
      cwd: dir,
      stdio: 'pipe',
    });
  git('init', '-q');
  write('schema/schema.graphql', options.base?.sdl ?? baseSdl);
  write('openapi/openapi.yaml', options.base?.doc ?? baseDoc);
  git('add', '.');
  git('commit', '-q', '-m', 'base contracts');
  if (options.head?.sdl) write('schema/schema.graphql', options.head.sdl);
  if (options.head?.doc) write('openapi/openapi.yaml', options.head.doc);
  for (const [file, content] of Object.entries(options.extra ?? {})) write(file, content);
  return dir;
}

const check = (dir: string, windowDays = 30) => checkEvolution(dir, 'HEAD', { usagePath: path.join(dir, 'contracts/usage.json'), windowDays });

const usage = (content: Partial<UsageFile>) =>
  JSON.stringify({ format: 'users-posts-usage/1', exportedAt: new Date().toISOString(), windowDays: 30, rest: {}, graphql: {}, ...content });

/** `User.bio` deprecated with a sunset on `date` (base), and removed (head). */
const bioDeprecated = (date: string) => editSdl(baseSdl, '  bio: String\n', `  bio: String @deprecated(reason: "Use about. Sunset: ${date}.")\n`);
const bioRemoved = editSdl(baseSdl, '  bio: String\n', '');
/** `DELETE /users/{id}` deprecated with a sunset on `date` (base), and removed (head). */
const deleteDeprecated = (date: string) =>
  editDoc(baseDoc, (d) => Object.assign(d.paths['/users/{id}'].delete, { deprecated: true, 'x-sunset': date }));
const deleteRemoved = editDoc(baseDoc, (d) => delete d.paths['/users/{id}'].delete);

describe('a deprecation carries a sunset date', () => {
  test('OpenAPI: `deprecated: true` without `x-sunset` (on an operation, a parameter or a property) fails, naming the sunset', () => {
    const doc = editDoc(baseDoc, (d) => {
      d.paths['/users/{id}'].delete.deprecated = true;
      d.paths['/users'].get.parameters[0].deprecated = true;
      d.paths['/users'].get.parameters[0]['x-sunset'] = 'soon';
      Object.assign(d.components.schemas.User.properties.bio, { deprecated: true, 'x-sunset': '2027-02-30' });
    });
    const problems = openapiSunsetProblems(doc);
    expect(problems).toEqual([
      expect.stringMatching(/^openapi\/openapi\.yaml \/paths\/~1users\/get\/parameters\/0: deprecated without a sunset date/),
      expect.stringMatching(/^openapi\/openapi\.yaml \/paths\/~1users~1\{id\}\/delete: deprecated without a sunset date \(no `x-sunset`/),
      expect.stringMatching(/^openapi\/openapi\.yaml \/components\/schemas\/User\/properties\/bio: deprecated without a sunset date/),
    ]);
    expect(openapiSunsetProblems(deleteDeprecated('2027-03-01'))).toEqual([]);
  });

  test('GraphQL: `@deprecated` whose reason gives no "Sunset: YYYY-MM-DD." fails, naming the coordinate', () => {
    const sdl = editSdl(baseSdl, '  bio: String\n', '  bio: String @deprecated\n').replace(
      'users(first: Int)',
      'users(first: Int @deprecated(reason: "Pages instead."))',
    );
    expect(graphqlSunsetProblems(sdl)).toEqual([
      expect.stringContaining('schema/schema.graphql Query.users.first: deprecated without a sunset date'),
      expect.stringContaining('schema/schema.graphql User.bio: deprecated without a sunset date'),
    ]);
    expect(graphqlSunsetProblems(bioDeprecated('2027-03-01'))).toEqual([]);
  });
});

describe('removal waits for the sunset date', () => {
  test('removing what was not deprecated fails, on both contracts', async () => {
    const { failures } = await check(repo({ head: { sdl: bioRemoved, doc: deleteRemoved } }));
    expect(failures).toEqual([
      expect.stringMatching(/^\[graphql\] Field 'bio' was removed[^\n]*\n {2}removed without being deprecated first/),
      expect.stringMatching(/^\[openapi\] DELETE \/users\/\{id\}: cannot remove an operation[^\n]*\n {2}removed without being deprecated first/),
    ]);
  });

  test('removing before the sunset date fails and names the date, even with nobody using it', async () => {
    const dir = repo({
      base: { sdl: bioDeprecated(FUTURE), doc: deleteDeprecated(FUTURE) },
      head: { sdl: bioRemoved, doc: deleteRemoved },
      extra: { 'contracts/usage.json': usage({}) },
    });
    const { failures } = await check(dir);
    expect(failures).toHaveLength(2);
    for (const failure of failures) expect(failure).toContain(`removed before its sunset date ${FUTURE}`);
  });

  test('a response property of a shared schema, deprecated: judged in each operation that answers it, by its users', async () => {
    const bio = (date: string) =>
      editDoc(baseDoc, (d) => Object.assign(d.components.schemas.User.properties.bio, { deprecated: true, 'x-sunset': date }));
    const removed = editDoc(baseDoc, (d) => delete d.components.schemas.User.properties.bio);
    const early = await check(repo({ base: { doc: bio(FUTURE) }, head: { doc: removed } }));
    expect(early.failures).toHaveLength(3);
    for (const failure of early.failures) expect(failure).toContain(`removed before its sunset date ${FUTURE}`);
    const seen = { requests: 2, lastSeen: today };
    const late = await check(
      repo({
        base: { doc: bio(PAST) },
        head: { doc: removed },
        extra: { 'contracts/usage.json': usage({ rest: { getUser: { clients: { 'user:9': seen } } } }) },
      }),
    );
    expect(late.failures).toEqual([expect.stringMatching(/^\[openapi\] GET \/users\/\{id\}[^]*user:9 \(getUser\)/)]);
    expect(late.passed.map((block) => block.split('\n')[0])).toEqual([
      expect.stringMatching(/^⚠ \[openapi\] GET \/users /),
      expect.stringMatching(/^⚠ \[openapi\] POST \/users /),
    ]);
  });

  test('removing after the sunset date while a client still uses it fails, naming the client and its operations', async () => {
    const dir = repo({
      base: { sdl: bioDeprecated(PAST), doc: deleteDeprecated(PAST) },
      head: { sdl: bioRemoved, doc: deleteRemoved },
      extra: {
        'contracts/usage.json': usage({
          rest: { deleteUser: { clients: { 'user:7': { requests: 3, lastSeen: today } } } },
          graphql: { 'User.bio': { clients: { 'mobile-app': { requests: 5, lastSeen: today, operations: ['Profile'] } } } },
        }),
      },
    });
    const { failures } = await check(dir);
    expect(failures).toEqual([
      expect.stringContaining('breaking for clients that used it within 30 days: mobile-app (Profile)'),
      expect.stringContaining('breaking for clients that used it within 30 days: user:7 (deleteUser)'),
    ]);
  });

  test('removing after the sunset date what no client used within the window passes with a warning naming it', async () => {
    const dir = repo({
      base: { sdl: bioDeprecated(PAST), doc: deleteDeprecated(PAST) },
      head: { sdl: bioRemoved, doc: deleteRemoved },
      extra: {
        // Used, but 40 days ago: outside the 30-day window.
        'contracts/usage.json': usage({
          graphql: { 'User.bio': { clients: { 'mobile-app': { requests: 5, lastSeen: utcDay(new Date(Date.now() - 40 * 86_400_000)) } } } },
          rest: { getUser: { clients: { 'user:7': { requests: 1, lastSeen: today } } } },
        }),
      },
    });
    const { failures, passed } = await check(dir);
    expect(failures).toEqual([]);
    expect(passed).toEqual([
      expect.stringMatching(
        /^⚠ \[graphql\] Field 'bio' \(deprecated\) was removed[^\n]*\n {2}breaking, but no client used it within 30 days \(sunset 2000-01-01 passed\)\n {2}id: graphql:User\.bio$/,
      ),
      expect.stringMatching(
        /^⚠ \[openapi\] DELETE \/users\/\{id\}: cannot remove an operation.*\n {2}breaking, but no client used it within 30 days/,
      ),
    ]);
    // A wider window sees the old use again.
    expect((await check(dir, 60)).failures).toEqual([expect.stringContaining('mobile-app')]);
  });

  test('without a usage file, a removal after the sunset date fails as before; the trusted documents name their operations', async () => {
    const profile = 'query Profile($id: ID!) { user(id: $id) { id bio } }';
    const dir = repo({ base: { sdl: bioDeprecated(PAST) }, head: { sdl: bioRemoved } });
    expect((await check(dir)).failures).toEqual([expect.stringContaining('breaking (no usage file to tell who uses it)')]);
    mkdirSync(path.join(dir, 'packages/client'), { recursive: true });
    writeFileSync(path.join(dir, 'packages/client/persisted-documents.json'), JSON.stringify({ abc: profile }));
    expect((await check(dir)).failures).toEqual([expect.stringContaining('trusted-documents (Profile)')]);
    // And with a usage file that saw nobody, the shipped documents still count.
    mkdirSync(path.join(dir, 'contracts'), { recursive: true });
    writeFileSync(path.join(dir, 'contracts/usage.json'), usage({}));
    expect((await check(dir)).failures).toEqual([expect.stringContaining('trusted-documents (Profile)')]);
  });

  test('a change that is not a removal (a parameter narrowed) breaks only the clients that sent that parameter', async () => {
    const limit = (maximum: number) => editDoc(baseDoc, (d) => (d.paths['/users'].get.parameters[0].schema.maximum = maximum));
    const seen = { requests: 1, lastSeen: today };
    const dir = repo({
      base: { doc: limit(100) },
      head: { doc: limit(50) },
      extra: {
        'contracts/usage.json': usage({ rest: { listUsers: { clients: { web: seen, batch: seen }, parameters: { limit: { batch: seen } } } } }),
      },
    });
    expect((await check(dir)).failures).toEqual([
      expect.stringMatching(/request maximum tightened from 100 to 50[^]*used it within 30 days: batch \(listUsers\)\n/),
    ]);
  });
});

describe('contracts/approvals.yaml', () => {
  const approval = (change: string, expires: string) =>
    stringifyYaml([{ change, reason: 'the admin API replaces it', owner: 'team-accounts', expires }]);
  /** User.bio removed without deprecation: a failing change whose id is graphql:User.bio. */
  const failing = (approvals: string) => repo({ head: { sdl: bioRemoved }, extra: { 'contracts/approvals.yaml': approvals } });

  test('a valid approval lets exactly the change it names through, and says who approved it', async () => {
    const { failures, passed } = await check(failing(approval('graphql:User.bio', FUTURE)));
    expect(failures).toEqual([]);
    expect(passed).toEqual([expect.stringContaining(`approved by team-accounts until ${FUTURE}: the admin API replaces it`)]);
  });

  test('an expired approval fails, and so does the change it named', async () => {
    const { failures } = await check(failing(approval('graphql:User.bio', PAST)));
    expect(failures).toEqual([
      expect.stringContaining('removed without being deprecated first'),
      `approval for graphql:User.bio (team-accounts) expired on ${PAST}`,
    ]);
  });

  test('an approval that names no current change, or one that passes without it, fails', async () => {
    const unknown = await check(failing(approval('graphql:User.name', FUTURE)));
    expect(unknown.failures).toContainEqual(expect.stringMatching(/^approval for graphql:User\.name \(team-accounts\) unknown/));
    // After its sunset and unused, the removal passes by itself: the approval is not needed.
    const dir = repo({
      base: { sdl: bioDeprecated(PAST) },
      head: { sdl: bioRemoved },
      extra: { 'contracts/usage.json': usage({}), 'contracts/approvals.yaml': approval('graphql:User.bio', FUTURE) },
    });
    expect((await check(dir)).failures).toEqual([expect.stringMatching(/^approval for graphql:User\.bio \(team-accounts\) unused/)]);
  });

  test('an entry without its owner or with a malformed expiry fails; an empty list is fine', async () => {
    const { failures } = await check(failing(stringifyYaml([{ change: 'graphql:User.bio', reason: 'r', expires: 'next week' }])));
    expect(failures).toContainEqual('contracts/approvals.yaml entry 1: needs owner (strings)');
    expect((await check(repo({ extra: { 'contracts/approvals.yaml': '# none\n[]\n' } }))).failures).toEqual([]);
  });
});

describe('pnpm contracts:changelog', () => {
  test('says what was added, deprecated (with its sunset), changed and removed, in both contracts', async () => {
    const headSdl = editSdl(bioDeprecated('2027-03-01'), '  bio: String', '  about: String\n  bio: String');
    const headDoc = editDoc(deleteDeprecated('2027-03-01'), (d) => {
      d.paths['/users'].get.parameters.push({ name: 'offset', in: 'query', schema: { type: 'integer' } });
      delete d.components.schemas.Post.properties.title;
      d.components.schemas.Post.required = ['id'];
      d.components.schemas.User.required = ['id'];
    });
    const markdown = await changelog({ openapi: baseDoc, graphql: baseSdl }, { openapi: headDoc, graphql: headSdl }, '`v1`');
    expect(markdown).toContain('## REST');
    expect(markdown).toMatch(/### Added\n\n- `GET \/users` \(listUsers\): query parameter `offset`\n/);
    expect(markdown).toContain('- `DELETE /users/{id}` (deleteUser): deprecated, removed on or after **2027-03-01**.');
    expect(markdown).toContain(
      "- **breaking**: GET /users response 200 response body: application/json property items/name: cannot make required response property 'name' optional",
    );
    expect(markdown).toContain('- property `Post.title`');
    expect(markdown).toMatch(/## GraphQL[^]*### Added\n\n- Field 'about' was added to object type 'User'/);
    expect(markdown).toContain('- `User.bio`: deprecated, removed on or after **2027-03-01**. Use about.\n');
  }, 30_000);
});
