// The two doors judge a field the same way (issue 29): every constrained field of the inputs both doors take, walked
// with the values just inside and just outside each bound its contract schema declares (and look-alike e-mails), sent
// through REST and through GraphQL; the verdicts, the failing field paths and the messages must be the same.
import { describe, expect, it } from '@jest/globals';
import { useTestApp } from '../support/app.js';
import { boundCases, fieldsOf, type BoundCase } from '../support/contract-values.js';
import { graphql } from '../support/graphql.js';

const suite = useTestApp({ rateLimits: { signup: { max: 100_000, windowMs: 3_600_000 } } });

type Verdict = { accepted: true } | { accepted: false; fields: { field: string; message: string }[] };

let serial = 0;
const unique = () => `parity${++serial}`;

const restVerdict = (status: number, body: { errors?: { field: string; message: string }[] }): Verdict =>
  status === 201 ? { accepted: true } : { accepted: false, fields: body.errors ?? [{ field: '(none)', message: `status ${status}` }] };

function graphqlVerdict(result: Awaited<ReturnType<typeof graphql>>): Verdict {
  if (!result.errors) return { accepted: true };
  const [error] = result.errors;
  expect(error?.extensions?.code).toBe('BAD_USER_INPUT');
  return { accepted: false, fields: (error?.extensions?.fields as { field: string; message: string }[]) ?? [] };
}

const sorted = (verdict: Verdict): Verdict =>
  verdict.accepted
    ? verdict
    : { accepted: false, fields: [...verdict.fields].sort((a, b) => `${a.field}${a.message}`.localeCompare(`${b.field}${b.message}`)) };

describe('sign-up: CreateUserInput on REST POST /api/v1/users and GraphQL createUser', () => {
  const cases: BoundCase[] = Object.entries(fieldsOf('CreateUserInput')).flatMap(([field, schema]) => boundCases(field, schema, unique));

  it('walks at least every bound of name, email, age and password', () => {
    const walked = new Set(cases.map((entry) => entry.what.split(':')[0]));
    expect([...walked]).toEqual(expect.arrayContaining(['age', 'email', 'name', 'password']));
  });

  it.each(cases)('$what: the same verdict and words on both doors', async ({ what, value }) => {
    const field = what.split(':')[0]!;
    // Each door signs up its own address (the same shape): the second would otherwise meet the first's as taken.
    const email = field === 'email' ? (value as string) : `${unique()}@example.com`;
    const input = (door: string) => ({ name: 'Parity', password: 'parity-password', [field]: value, email: email.replace('parity', door) });
    const rest = await suite.app.inject({ method: 'POST', url: '/api/v1/users', payload: input('rest') });
    const viaGraphql = await graphql(suite.app, 'mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }', {
      input: input('gql'),
    });
    const restSide = sorted(restVerdict(rest.statusCode, rest.json()));
    expect(sorted(graphqlVerdict(viaGraphql))).toEqual(restSide);
    if (!restSide.accepted) expect(restSide.fields.map((failure) => failure.field)).toContain(field);
  });
});

describe('a new post: CreatePostInput on REST POST /api/v1/users/{id}/posts and GraphQL createPost', () => {
  const cases: BoundCase[] = Object.entries(fieldsOf('CreatePostInput')).flatMap(([field, schema]) => boundCases(field, schema, unique));

  it.each(cases)('$what: the same verdict and words on both doors', async ({ what, value }) => {
    const field = what.split(':')[0]!;
    const input = { title: 'Parity', content: 'Parity content', [field]: value };
    const rest = await suite.app.inject({
      method: 'POST',
      url: `/api/v1/users/${suite.alice.id}/posts`,
      headers: suite.alice.headers,
      payload: input,
    });
    const viaGraphql = await graphql(
      suite.app,
      'mutation ($title: String!, $content: String!, $authorId: ID!) { createPost(title: $title, content: $content, authorId: $authorId) { id } }',
      { ...input, authorId: String(suite.alice.id) },
      suite.alice.headers,
    );
    expect(sorted(graphqlVerdict(viaGraphql))).toEqual(sorted(restVerdict(rest.statusCode, rest.json())));
  });
});

describe('a change: UpdateUserInput on REST PATCH /api/v1/users/{id} and GraphQL updateUser', () => {
  const cases: BoundCase[] = Object.entries(fieldsOf('UpdateUserInput'))
    .filter(([field]) => field !== 'role')
    .flatMap(([field, schema]) => boundCases(field, schema, unique));

  it.each(cases)('$what: the same verdict and words on both doors', async ({ what, value }) => {
    const field = what.split(':')[0]!;
    const rest = await suite.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${suite.bob.id}`,
      headers: suite.bob.headers,
      payload: { [field]: field === 'email' && typeof value === 'string' ? value.replace('parity', 'restpatch') : value },
    });
    const viaGraphql = await graphql(
      suite.app,
      'mutation ($id: ID!, $input: UpdateUserInput!) { updateUser(id: $id, input: $input) { id } }',
      { id: String(suite.bob.id), input: { [field]: field === 'email' && typeof value === 'string' ? value.replace('parity', 'gqlpatch') : value } },
      suite.bob.headers,
    );
    const restSide = rest.statusCode === 200 ? ({ accepted: true } as const) : restVerdict(rest.statusCode, rest.json());
    expect(sorted(graphqlVerdict(viaGraphql))).toEqual(sorted(restSide));
  });
});
