// Suites that need something of the machine beyond Node (a browser, PostgreSQL binaries, redis-server): run when it is
// there, else skipped with the reason `pnpm test` prints after jest's summary (scripts/test.mjs), or refused when the
// environment requires them (CI).
import { describe } from '@jest/globals';
import { appendFileSync } from 'node:fs';

export interface Requirement {
  /** What the skipped suites are, as the summary names them ("the /docs browser test"). */
  suites: string;
  /** What this machine lacks (empty: the suites run). */
  missing: string[];
  /** The variable that turns a skip into a failure (CI sets it). */
  requiredBy: string;
  /** How a developer runs them. */
  howToRun: string;
}

/**
 * `describe` when nothing is missing. Else `describe.skip`, each suite declared with it adding a line for `pnpm test`'s
 * summary (written to the file TEST_SKIPS_FILE names); with `<requiredBy>=1` in the environment, a suite that throws.
 */
export function describeRequiring(requirement: Requirement): typeof describe {
  const { suites, missing, requiredBy, howToRun } = requirement;
  if (missing.length === 0) return describe;
  if (process.env[requiredBy] === '1') {
    const refuse = () => {
      throw new Error(`${requiredBy}=1 but this machine lacks, for ${suites}: ${missing.join('; ')}`);
    };
    return Object.assign(refuse, describe) as unknown as typeof describe;
  }
  // Reported when a suite is declared with it (a file that only imports its module skips nothing).
  const skip = (...args: Parameters<typeof describe.skip>) => {
    const report = process.env.TEST_SKIPS_FILE;
    if (report) appendFileSync(report, `${JSON.stringify({ suites, missing, howToRun })}\n`);
    return describe.skip(...args);
  };
  return Object.assign(skip, describe.skip) as unknown as typeof describe;
}
