// EMAIL-CHANGE-ENUM (issue 40): a signed-in user tests whether addresses have accounts by changing its own e-mail to
// them (409 taken, 200 free). Each change of one's own e-mail uses up the sign-up bucket (SPEC §4), as a sign-up with
// that address would: once spent, every such change answers 429 whether the address is taken or free, on both doors.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import { bearer, createAuthTestApp, createUser, login } from '../support/auth.js';

const SIGNUP_MAX = 4;
const uniqueEmail = (name: string) => `${name}-${randomUUID().slice(0, 8)}@example.com`;

let app: FastifyInstance;
beforeAll(async () => {
  app = await createAuthTestApp({ config: { rateLimits: { signup: { max: SIGNUP_MAX, windowMs: 3_600_000 } } } });
});
afterAll(() => app.close());

async function prober(remoteAddress: string) {
  const user = await createUser(app, { email: uniqueEmail('prober') });
  const response = await login(app, { email: user.email, password: user.password }, remoteAddress);
  expect(response.statusCode).toBe(200);
  return { ...user, headers: bearer(response.json().accessToken as string) };
}

describe('EMAIL-CHANGE-ENUM: probing addresses by changing one’s own e-mail', () => {
  it('over REST: priced as sign-ups, then 429 for a taken and a free address alike', async () => {
    const remoteAddress = '203.0.113.40';
    const me = await prober(remoteAddress);
    const taken = await createUser(app, { email: uniqueEmail('taken') });
    const patch = (email: string) =>
      app.inject({ method: 'PATCH', url: `/api/v1/users/${me.id}`, headers: me.headers, payload: { email }, remoteAddress });

    const answers: number[] = [];
    for (let probe = 0; probe < SIGNUP_MAX; probe++) answers.push((await patch(probe % 2 === 0 ? taken.email : uniqueEmail('free'))).statusCode);
    expect(answers).toEqual([409, 200, 409, 200]); // a careful client still learns its own change failed
    expect((await patch(taken.email)).statusCode).toBe(429);
    expect((await patch(uniqueEmail('free'))).statusCode).toBe(429);
    // The same budget as sign-up's: this address cannot sign up either now.
    const signup = await app.inject({
      method: 'POST',
      url: '/api/v1/users',
      payload: { name: 'Late', email: uniqueEmail('late'), password: 'a fine passphrase' },
      remoteAddress,
    });
    expect(signup.statusCode).toBe(429);
    // Nothing changed by the refused ones.
    expect((await app.db.prisma.user.findUniqueOrThrow({ where: { id: taken.id } })).email).toBe(taken.email);
  });

  it('over GraphQL: each aliased updateUser counts; past the budget a taken address is refused as a free one is', async () => {
    const remoteAddress = '203.0.113.41';
    const me = await prober(remoteAddress);
    const taken = await createUser(app, { email: uniqueEmail('taken') });
    // A mutation's fields run one after the other, and the first error ends them (updateUser is non-null): the free
    // addresses first, then a taken one, which now gets the bucket's refusal instead of telling it is taken.
    const emails = [...Array.from({ length: SIGNUP_MAX }, () => uniqueEmail('free')), taken.email];
    const aliases = emails.map((email, index) => `p${index}: updateUser(id: "${me.id}", input: { email: "${email}" }) { email }`);
    const response = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: me.headers,
      payload: { query: `mutation { ${aliases.join(' ')} }` },
      remoteAddress,
    });
    const [error, ...others] = (response.json().errors ?? []) as { path: string[]; extensions: { code: string } }[];
    expect(others).toHaveLength(0);
    expect(error).toMatchObject({ path: [`p${SIGNUP_MAX}`], extensions: { code: 'RATE_LIMITED' } });
    expect((await app.db.prisma.user.findUniqueOrThrow({ where: { id: me.id } })).email).toBe(emails[SIGNUP_MAX - 1]);
  });
});
