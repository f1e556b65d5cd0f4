// ESLint (flat config), run by .ci/run with zero findings allowed.
// TypeScript (`pnpm lint`): typescript-eslint's recommended rules on every package, app, script and bench file.
// GraphQL (`pnpm lint:graphql`): @graphql-eslint's schema-recommended rules on schema/schema.graphql, with the two
// adjustments below.
import graphqlPlugin from '@graphql-eslint/eslint-plugin';
import tseslint from 'typescript-eslint';

export default [
  { ignores: ['**/node_modules/**', '**/dist/**', '**/generated/**', 'bench/peers/**/node_modules/**', '.data/**'] },
  ...tseslint.configs.recommended.map((config) => ({ ...config, files: ['**/*.ts', '**/*.mts'] })),
  {
    files: ['**/*.ts', '**/*.mts'],
    rules: {
      // `_name` marks what a destructuring leaves out on purpose (`const { password: _password, ...shown } = user`).
      // A variable a closure reads before its one assignment (a server's handler and the object that owns the server).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // Tests poke at JSON answers and documents whose shapes are what they check.
    files: ['**/test/**/*.ts', 'scripts/test/**/*.ts', '**/src/**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['schema/**/*.graphql'],
    languageOptions: { parser: graphqlPlugin.parser, parserOptions: { graphQLConfig: { schema: 'schema/schema.graphql' } } },
    plugins: { '@graphql-eslint': graphqlPlugin },
    rules: {
      ...graphqlPlugin.configs['flat/schema-recommended'].rules,
      // The schema writes a one-line description inline ("…") and a longer one as a block ("""…"""), as the GraphQL
      // specification's own examples do; the rule wants one style for both. Every description is required
      // (`require-description`, and `pnpm contracts:check` for roots and arguments), only its quoting is free.
      '@graphql-eslint/description-style': 'off',
      // Values, not entities: statistics and the Relay connection types have no identity of their own to cache by.
      '@graphql-eslint/strict-id-in-types': [
        'error',
        { acceptedIdNames: ['id'], acceptedIdTypes: ['ID'], exceptions: { types: ['Statistics', 'PageInfo'], suffixes: ['Connection', 'Edge'] } },
      ],
    },
  },
];
