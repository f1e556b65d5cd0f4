// Jest for the whole workspace: ESM + TypeScript through SWC (no type-check here; `pnpm typecheck` does that).
/**
 * Suites whose assertions are latencies measured against the same machine's work (probe gaps, event-loop stalls,
 * recovery times): `pnpm test` (scripts/test.mjs) runs them alone, after the others, so that no other suite's load
 * is in their figures. Everything else runs on two workers.
 */
export const suitesMeasuringLatency = [
  'apps/api/test/adversary/graphql-amplification.test.ts',
  'apps/api/test/adversary/subscription-exhaustion.test.ts',
  'apps/api/test/adversary/quiet-defaults.test.ts',
  'apps/api/test/cluster/faults-database.test.ts',
  'apps/api/test/cluster/faults-redis.test.ts',
];

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022', keepClassNames: true },
        module: { type: 'es6' },
      },
    ],
  },
  // Sources import siblings as `./x.js` (NodeNext); map them back to the .ts files.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  // HTTP and process suites in each package's test/; unit tests of pure modules beside them in src/ (x.test.ts).
  testMatch: ['<rootDir>/{apps,packages,scripts}/**/test/**/*.test.ts', '<rootDir>/{apps,packages}/*/src/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 60000,
};
