// Attack: password hashing as a queue (issue 31, item 8). An ADMIN batch of 100 users with passwords hashed them all at
// once, filling libuv's thread pool, and every login waited behind it (46 ms → 3.6 s). Now a batch hashes in two
// lanes: logins go on while it runs. Counted in answers, not timed: how many logins are answered during one batch.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { accessTokenOf, bearer, createAuthTestApp, createUser, login, type TestUser } from '../support/auth.js';

let app: FastifyInstance;
let lea: TestUser;
let adminToken: string;
beforeAll(async () => {
  app = await createAuthTestApp({ config: { rateLimits: { loginMax: 10_000, loginIpMax: 10_000 } } });
  lea = await createUser(app, { email: 'lea@example.com' });
  adminToken = await accessTokenOf(app, await createUser(app, { email: 'boss@example.com', role: 'ADMIN' }));
});
afterAll(() => app.close());

describe('attack: a batch of password hashes starving logins', () => {
  it('logins are answered one after another while an ADMIN batch of 100 users with passwords is hashed', async () => {
    const users = Array.from({ length: 100 }, (_, n) => ({
      name: `Batch ${n}`,
      email: `batch-${n}@example.com`,
      password: `a batch passphrase ${n}`,
    }));
    let batchAnswered = false;
    const batch = app
      .inject({ method: 'POST', url: '/api/v1/users/batch', headers: bearer(adminToken), payload: { users } })
      .finally(() => (batchAnswered = true));
    let loginsDuringBatch = 0;
    while (!batchAnswered) {
      const response = await login(app, { email: lea.email, password: lea.password });
      expect(response.statusCode).toBe(200);
      if (!batchAnswered) loginsDuringBatch++;
    }
    expect((await batch).statusCode).toBe(201);
    // All at once, the first login waited for the whole batch's hashing: one or two answered before the batch did.
    expect(loginsDuringBatch).toBeGreaterThanOrEqual(5);
  }, 120_000);
});
