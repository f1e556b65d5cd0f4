// Attack on the contract usage recorder (plugins/contract-usage.ts): the GraphQL operation name is the caller's to
// invent, like X-Client-Name, and it is part of every row's primary key: an unbounded name must neither poison the
// flush (a key too long for the index fails the whole upsert, retried forever) nor invent rows without bound.
import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { ANONYMOUS_OPERATION, DEFAULT_USAGE_BOUNDS } from '../../src/plugins/contract-usage.js';
import { useTestApp } from '../support/app.js';

describe('contract usage: invented GraphQL operation names', () => {
  const suite = useTestApp({ contractUsage: { enabled: true, flushIntervalMs: 3_600_000 }, defaultRateLimit: { max: 10_000, windowMs: 60_000 } });

  const graphql = (query: string, client: string, remoteAddress = '127.0.0.1') =>
    suite.app.inject({ method: 'POST', url: '/graphql', headers: { 'x-client-name': client }, payload: { query }, remoteAddress });

  it('one request with a huge operation name does not stop every later count from being recorded', async () => {
    // Random (incompressible) hex: a btree key of several kilobytes is over PostgreSQL's index row limit (2704 bytes).
    const huge = `Op${randomBytes(4000).toString('hex')}`;
    const hostile = await graphql(`query ${huge} { posts(limit: 1) { id } }`, 'attacker');
    expect(hostile.statusCode).toBe(200);
    await suite.app.contractUsage.flush();

    expect((await graphql('query Honest { users(limit: 1) { id } }', 'honest')).statusCode).toBe(200);
    await suite.app.contractUsage.flush();
    await suite.app.contractUsage.flush();

    const honest = await suite.app.db.prisma.contractUsage.findMany({ where: { client: 'honest' }, select: { coordinate: true, operation: true } });
    expect(honest).toContainEqual({ coordinate: 'Query.users', operation: 'Honest' });
    const longest = await suite.app.db.prisma.$queryRaw<
      { longest: number | null }[]
    >`SELECT max(length(operation))::int AS longest FROM contract_usage`;
    expect(longest[0]!.longest ?? 0).toBeLessThanOrEqual(128);
  });

  it('a flood of invented operation names from one address adds its share of new names a day, not a share per flush', async () => {
    await suite.app.contractUsage.flush();
    const before = await suite.app.db.prisma.contractUsage.count();
    for (let n = 0; n < 1100; n++) {
      expect((await graphql(`query Invented${n} { posts(limit: 1) { id } }`, 'flooder', '203.0.113.77')).statusCode).toBe(200);
      // The old bound was per flush window (1 000 names each): a flush now and then gave the flood a new share.
      if (n % 250 === 249) await suite.app.contractUsage.flush();
    }
    await suite.app.contractUsage.flush();
    const added = (await suite.app.db.prisma.contractUsage.count()) - before;
    // Query.posts, Query.posts(limit:), Post.id per name: the address's 10 new operation names, and anonymous-operation.
    expect(added).toBeLessThanOrEqual(3 * (DEFAULT_USAGE_BOUNDS.newNamesPerAddress + 1));
    const anonymous = await suite.app.db.prisma.contractUsage.findFirst({
      where: { client: 'flooder', coordinate: 'Query.posts', operation: ANONYMOUS_OPERATION },
      select: { requests: true },
    });
    expect(anonymous?.requests).toBe(BigInt(1100 - DEFAULT_USAGE_BOUNDS.newNamesPerAddress));
  });
});
