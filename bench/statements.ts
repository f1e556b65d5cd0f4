// SQL statements executed in one database, counted by the server itself (pg_stat_statements), for statements per request.
//
// Method: pg_stat_statements keeps, per (user, database, normalized statement), the number of completed executions
// (`calls`). Summing `calls` over the rows whose `dbid` is the bench database, before and after a fixed number of
// requests that have all been answered, gives exactly the statements those requests made the server run: every
// top-level statement counts once (SELECT, INSERT, and BEGIN/COMMIT as utility statements), whether sent by Prisma or by
// the baseline's pg pool, and whatever the application believes it sent. The snapshot query itself runs in the
// `postgres` database, so it is not counted. Exactness relies on nothing else using the bench database meanwhile (the
// servers are idle between runs; `settle()` first waits out the requests a timed run left in flight), on `pg_stat_statements.max` (5 000) not evicting entries (a few dozen distinct
// statements here), and on statements not failing (a failed statement is not recorded; the bench requests succeed).
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

export class StatementCounter {
  private constructor(
    private readonly client: pg.Client,
    private readonly dbid: number,
  ) {}

  /** Null when pg_stat_statements is not loaded on the server (e.g. a DATABASE_URL server without it). */
  static async open(adminUrl: string, database: string): Promise<StatementCounter | null> {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      await client.query('SELECT 1 FROM pg_stat_statements LIMIT 1');
      const { rows } = await client.query<{ oid: number }>('SELECT oid FROM pg_database WHERE datname = $1', [database]);
      return new StatementCounter(client, rows[0]!.oid);
    } catch (error) {
      console.warn(`statement counts unavailable (pg_stat_statements): ${(error as Error).message}`);
      await client.end();
      return null;
    }
  }

  /** Statements completed in the database so far (since the server started or the statistics were reset). */
  async total(): Promise<number> {
    const { rows } = await this.client.query<{ calls: string | null }>('SELECT sum(calls) AS calls FROM pg_stat_statements WHERE dbid = $1', [
      this.dbid,
    ]);
    return Number(rows[0]?.calls ?? 0);
  }

  /**
   * Waits until no statement has completed for 300 ms: a timed autocannon run returns with requests still in flight,
   * whose statements must not land in the next count.
   */
  async settle(): Promise<number> {
    let last = await this.total();
    for (;;) {
      await sleep(300);
      const now = await this.total();
      if (now === last) return now;
      last = now;
    }
  }

  /** Statements per unit of `work`: runs it, which must return how many units (requests) completed. */
  async per(work: () => Promise<number>): Promise<number> {
    const before = await this.settle();
    const units = await work();
    const after = await this.total();
    return units ? Math.round(((after - before) / units) * 100) / 100 : NaN;
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}
