// An endpoint that needs a credential answers 401 before any budget of an account is spent (SPEC §0.3): the probe's
// anonymous `POST /auth/email/verify/resend` answered 401 five times, then 429 "retry in 3600 s".
import { describe, expect, it } from '@jest/globals';
import { useTestApp } from '../support/app.js';

describe('authentication before budgets', () => {
  const suite = useTestApp();

  it('an anonymous caller of an operation that needs a credential gets 401 every time, never the bucket of an account', async () => {
    for (let i = 0; i < 12; i++) {
      const response = await suite.app.inject({ method: 'POST', url: '/auth/email/verify/resend', remoteAddress: '203.0.113.40' });
      expect(response.statusCode).toBe(401);
    }
  });

  it("and the account's own budget is whole afterwards, from the same address", async () => {
    const response = await suite.app.inject({
      method: 'POST',
      url: '/auth/email/verify/resend',
      headers: suite.alice.headers,
      remoteAddress: '203.0.113.40',
    });
    expect(response.statusCode).not.toBe(429);
    expect(Number(response.headers['x-ratelimit-remaining'])).toBeGreaterThan(0);
  });
});
